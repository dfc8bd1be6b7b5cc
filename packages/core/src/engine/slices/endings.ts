/**
 * The endings of turns this tab saw running (its own, another tab's, one recovered after a
 * reload), reported once each when the record shows how they ended: what `onFinish` and
 * `onError` are told. A turn that had ended before this tab looked is never reported.
 */
import { errorRecord, type ErrorRecord } from '../../wire/contract/errors'
import { seeEntry } from '../../wire/contract/explain'
import { byId, recordedMessageId, withId } from '../../wire/contract/ids'
import type { HistorySnapshot, Message } from '../../wire/contract/snapshot'
import type { Command, EngineState, Step, StepEvent, TurnEnding, TurnOrigin } from '../model'
import { isSuspended } from '../derive'
import { recordedMessage } from '../transcript'

/** Enough for any thread's turns in flight; ids that never end (junk) fall off the end. */
const WATCHED = 16

export function watch(state: EngineState, executionId: string | null | undefined): EngineState {
  if (!executionId || state.watching.includes(executionId) || state.reported.includes(executionId))
    return state
  return { ...state, watching: [...state.watching, executionId].slice(-WATCHED) }
}

export function unwatch(state: EngineState, executionId: string): EngineState {
  if (!state.watching.includes(executionId)) return state
  return { ...state, watching: state.watching.filter((id) => id !== executionId) }
}

/**
 * `watch`, remembering whose turn it is (`TurnOrigin`) for its ending: the first origin seen
 * stays, except that a turn this tab posted is `own` even if a read saw it running first.
 */
export function watchAs(
  state: EngineState,
  executionId: string | null | undefined,
  origin: TurnOrigin,
): EngineState {
  const next = watch(state, executionId)
  if (!executionId || !next.watching.includes(executionId)) return next
  const known = byId(next.origins, executionId)
  if (known === origin || (known && origin !== 'own')) return next
  return { ...next, origins: withId(pick(next.origins, next.watching), executionId, origin) }
}

/** The origins of `ids` only: those of turns no longer watched fall away with them. */
function pick(origins: EngineState['origins'], ids: readonly string[]) {
  let kept: Record<string, TurnOrigin> = {}
  for (const id of ids) {
    const origin = byId(origins, id)
    if (origin) kept = withId(kept, id, origin)
  }
  return kept
}

/** A stand-in id (released n8n) gave way to the execution's id. */
export function renameWatched(state: EngineState, from: string, to: string): EngineState {
  if (from === to || !state.watching.includes(from)) return state
  return watchAs(unwatch(state, from), to, state.origins?.[from] ?? 'followed')
}

function endingOf(
  snapshot: HistorySnapshot,
  executionId: string,
  origin: TurnOrigin,
): TurnEnding<ErrorRecord> | null {
  const assistant = recordedMessage(snapshot, recordedMessageId(executionId, 'assistant'))
  if (!assistant || assistant.executionStatus === 'running') return null
  const user = recordedMessage(snapshot, recordedMessageId(executionId, 'user'))
  const messages: Message[] = user ? [user, assistant] : [assistant]
  const suspended = assistant.content.some(isSuspended)
  const status = assistant.executionStatus ?? 'success'
  return {
    executionId,
    origin,
    status: status === 'success' && suspended ? 'suspended' : status,
    messages,
    error:
      status === 'error'
        ? // The agent's words when the record has them; else ours, with the code's entry.
          errorRecord(
            'agent_error',
            assistant.executionError ?? `The turn failed.${seeEntry('agent_error')}`,
          )
        : null,
  }
}

/** Every watched turn the fresh record shows ended, reported and no longer watched. */
export function reportEndings(state: EngineState): Step {
  const { recorded } = state
  if (!recorded || state.watching.length === 0) return { state, commands: [] }
  const commands: Command[] = []
  const events: StepEvent[] = []
  let next = state
  for (const executionId of state.watching) {
    const ending = endingOf(recorded, executionId, byId(state.origins, executionId) ?? 'followed')
    if (!ending) continue
    commands.push({ type: 'turn-ended', ending })
    events.push({ type: 'turn-ended', ending })
    next = unwatch(next, executionId)
    next = { ...next, reported: [...next.reported, executionId].slice(-WATCHED) }
  }
  return events.length > 0 ? { state: next, commands, events } : { state: next, commands }
}
