/**
 * Facts derived from the engine state that the reducer, the scheduler and the selectors all use:
 * what runs, the session's status, the open suspensions. Pure functions of the state alone (no
 * clock: ages are decided by the reducer on this tab's own clock and kept in the state).
 */
import { isRecord } from '../wire/contract/schema'
import type { MessagePart, Suspension, ToolCallPart } from '../wire/contract/snapshot'
import type { LiveTurn } from './fold'
import type { EngineState } from './model'

/**
 * Exactly one at a time:
 * - `idle`: nothing runs; a message may be sent.
 * - `submitting`: the message is posted, and its turn has not begun: the server has not accepted
 *   it yet, or took it into its own queue (`message-queued`; `submit()` resolved `accepted`).
 * - `streaming`: this tab reads the turn's live stream.
 * - `recovering`: this tab does not know the thread's state (first read pending, its live stream
 *   was cut, or the server never confirmed the message) and reads the recorded transcript.
 * - `following`: a turn runs that this tab has no live stream of (another tab's, or one recovered
 *   after a reload), or another tab has posted a message whose turn has not begun yet; push
 *   notifications, reads and the tab relay keep the transcript current.
 * - `stopping`: Stop was asked; the turn runs until the record shows it ended.
 */
export type SessionStatus =
  'idle' | 'submitting' | 'streaming' | 'recovering' | 'following' | 'stopping'

/** The execution that runs now, as far as this tab knows. */
export function activeExecutionId(state: EngineState): string | null {
  const { live, recorded } = state
  if (live && !live.ended) return live.executionId
  const recordedId = recorded?.activeExecutionId ?? null
  // This tab saw the turn end live; a record that still calls it active predates that end.
  if (live && recordedId === live.executionId) return null
  if (recordedId && recordedId === state.presumedEnded) return null
  return recordedId
}

/**
 * A turn begun without `execution-started` (released n8n, `releasedPart`) goes by a stand-in id
 * (`standInId`) until `done` names the execution or a read shows it
 * ([decision](../../../../docs/decisions/stand-in-ids.md)).
 */
export const isStandIn = (executionId: string | null | undefined) =>
  executionId?.startsWith('unannounced:') === true

/** What `refresh()` waits for: no read in flight or asked for, or nobody listening any more. */
export const readsSettled = (state: EngineState) =>
  !state.active || (!state.reads.inFlight && !state.reads.wanted)

/** Whether another tab holds this thread's gate with a message it posted. */
export const heldByAnotherTab = (state: EngineState) => state.othersPosting

export function sessionStatus(state: EngineState): SessionStatus {
  if (state.stop) return 'stopping'
  // A message the server queued is on its way still: its turn has not begun.
  if (state.own && !state.own.timedOut)
    return state.own.phase === 'streaming' ? 'streaming' : 'submitting'
  if (state.cut || !state.synced) return 'recovering'
  // Another tab's message, sent and not begun yet, holds the gate as its turn will.
  return activeExecutionId(state) || heldByAnotherTab(state) ? 'following' : 'idle'
}

/** A tool call that waits for a person (its turn ended there). */
export const isSuspended = (part: MessagePart) =>
  part.type === 'tool-call' && part.suspendPayload !== undefined

const noSuspensions: Suspension[] = []

/** A suspension that a live turn ended with: open at once, until a record says otherwise. */
function liveSuspensions(turn: LiveTurn | null): Suspension[] {
  if (!turn?.ended) return noSuspensions
  const found: Suspension[] = []
  for (const part of turn.assistant.content) {
    const payload = part.type === 'tool-call' ? part.suspendPayload : undefined
    if (isRecord(payload) && typeof payload.runId === 'string')
      found.push({
        toolCallId: (part as ToolCallPart).toolCallId,
        runId: payload.runId,
        suspendPayload: payload,
      })
  }
  return found
}

/**
 * The open suspensions: the record's, and those a live turn ended with that the record has not
 * caught up with yet, less those this tab answered already.
 */
export function openSuspensions(state: EngineState): Suspension[] {
  const recorded = state.recorded?.openSuspensions ?? noSuspensions
  let live: Suspension[] = noSuspensions
  for (const turn of [...state.settled, state.live]) {
    const found = liveSuspensions(turn)
    if (found.length > 0) live = live.concat(found)
  }
  const fresh = live.filter((s) => !recorded.some((r) => r.toolCallId === s.toolCallId))
  const all = fresh.length === 0 ? recorded : recorded.concat(fresh)
  if (state.answered.length === 0) return all
  return all.filter(
    (suspension) => !state.answered.some((answer) => answer.toolCallId === suspension.toolCallId),
  )
}
