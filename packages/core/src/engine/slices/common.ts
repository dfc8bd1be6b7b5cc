/** What the slices share: building steps, asking for a read, and the live turn's ids. */
import type { ErrorRecord } from '../../wire/contract/errors'
import { recordedMessageId } from '../../wire/contract/ids'
import type { ExecutionStatus, HistorySnapshot, Message } from '../../wire/contract/snapshot'
import type { LiveTurn } from '../fold'
import type {
  Command,
  EngineState,
  ServerTraits,
  Step,
  StepEvent,
  StopResult,
  SubmitResult,
} from '../model'
import { recordCovers, recordSupersedes } from '../transcript'
import { isStandIn } from '../derive'

export const step = (state: EngineState, ...commands: Command[]): Step => ({ state, commands })

/**
 * A `submit()`'s outcome (`request`, `result`): its command first, and its event, before what
 * `done` does and reports.
 */
export const settled = (request: number, result: SubmitResult<ErrorRecord>, done: Step): Step => ({
  ...done,
  commands: [{ type: 'settle-submit', request, result }, ...done.commands],
  events: [{ type: 'submit-settled', request, result }, ...(done.events ?? [])],
})

/** `done`, reporting `events` after those it reported already. */
export const reported = (done: Step, ...events: StepEvent[]): Step => ({
  ...done,
  events: [...(done.events ?? []), ...events],
})

/**
 * Runs each of `next` in turn on the state the step before left, keeping every command and every
 * event in order.
 */
export function andThen(first: Step, ...next: ((state: EngineState) => Step)[]): Step {
  let { state } = first
  const commands = [...first.commands]
  const events = [...(first.events ?? [])]
  for (const then of next) {
    const after = then(state)
    state = after.state
    commands.push(...after.commands)
    if (after.events) events.push(...after.events)
  }
  return events.length > 0 ? { state, commands, events } : { state, commands }
}

export function wantRead(state: EngineState, urgent = false): EngineState {
  if (!state.active) return state
  // Wanted for a reason of its own now, not only the push channel's connect.
  const { onConnect: _, ...reads } = state.reads
  return { ...state, reads: { ...reads, wanted: true, urgent: state.reads.urgent || urgent } }
}

/** Resolves every `stop()` call waiting on the Stop that ends now. */
export function settleStop(waiters: readonly number[], result: StopResult<ErrorRecord>): Command[] {
  return waiters.length === 0 ? [] : [{ type: 'settle-stop', requests: waiters, result }]
}

/**
 * A live turn that gives way to another one stays on screen until the record holds it (it never
 * vanishes): one that ended, and one this tab lost track of (a cut stream) before another tab's
 * turn arrived. One under a stand-in id keeps what had ended when it began (`LiveTurn.after`), so
 * that a later record names it as it would have named the live turn.
 */
export function setAside(state: EngineState): Pick<EngineState, 'settled'> {
  const { live, recorded, settled } = state
  if (!live || (recorded && recordedTurn(recorded, live))) return { settled }
  return { settled: [...settled, live] }
}

/**
 * `turn` as the live view keeps it: under a stand-in id, with the executions that had ended when
 * it began (`base`); under the server's id, without (whatever another tab sent).
 */
export function withBase(turn: LiveTurn, base: readonly string[]): LiveTurn {
  if (isStandIn(turn.executionId)) return { ...turn, after: base }
  if (turn.after === undefined) return turn
  const { after: _, ...named } = turn
  return named
}

/** The record holds this turn: it ended there, or (a turn still running) it is at least as far. */
export const recordedTurn = (snapshot: HistorySnapshot, turn: LiveTurn) =>
  turn.ended ? recordSupersedes(snapshot, turn) : recordCovers(snapshot, turn)

export { isStandIn } from '../derive'

/** The turn under another execution id (a stand-in id giving way to the server's), its messages too. */
export function renamed(turn: LiveTurn, executionId: string): LiveTurn {
  const rename = (message: Message): Message => ({
    ...message,
    id: recordedMessageId(executionId, message.role),
    executionId,
  })
  return {
    ...turn,
    executionId,
    user: turn.user && rename(turn.user),
    assistant: rename(turn.assistant),
  }
}

export function withStatus(turn: LiveTurn, status: ExecutionStatus): LiveTurn {
  return {
    ...turn,
    user: turn.user && { ...turn.user, executionStatus: status },
    assistant: { ...turn.assistant, executionStatus: status },
  }
}

/** Fills in what the server showed of itself, keeping what the client's options said. */
export function learn(server: ServerTraits, speaksSpec: boolean): ServerTraits {
  if (server.keepsTurnOnDisconnect !== null && server.stopsByExecutionId !== null) return server
  return {
    keepsTurnOnDisconnect: server.keepsTurnOnDisconnect ?? speaksSpec,
    stopsByExecutionId: server.stopsByExecutionId ?? speaksSpec,
  }
}
