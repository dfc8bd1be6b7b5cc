/**
 * What the devtools panel says about one step through a session's reducer: which activity it
 * belongs to (reads, push, relay, the tab's own turn, Stop) and a one-line detail. Pure, so the
 * panel only renders and the wording is tested without a DOM.
 */
import type { InspectedStep } from '@preview-chat/core'
import type { Command, EngineAction, EngineState } from '@preview-chat/core/internal'

export type ActivityKind = 'read' | 'push' | 'relay' | 'turn' | 'stop' | 'other'

/** One line of the panel's action log. */
export interface LoggedStep {
  /** Its place in this session's log (keys the list). */
  seq: number
  at: number
  type: EngineAction['type']
  kind: ActivityKind
  detail: string
  /** The commands the reducer returned, as `post`, `relay posting`, … */
  commands: string[]
}

/** Counts of the reads, push and relay traffic the panel has seen since it started listening. */
export interface Activity {
  readsStarted: number
  snapshots: number
  readsFailed: number
  pushMessages: number
  pushChanges: number
  relayReceived: number
  relaySent: number
}

export const noActivity: Activity = {
  readsStarted: 0,
  snapshots: 0,
  readsFailed: 0,
  pushMessages: 0,
  pushChanges: 0,
  relayReceived: 0,
  relaySent: 0,
}

const kinds: Partial<Record<EngineAction['type'], ActivityKind>> = {
  'read-wanted': 'read',
  'read-started': 'read',
  snapshot: 'read',
  'read-failed': 'read',
  'read-cancelled': 'read',
  'push-message': 'push',
  'push-changed': 'push',
  'relay-received': 'relay',
  'submit-requested': 'turn',
  'resume-requested': 'turn',
  'post-failed': 'turn',
  'turn-events': 'turn',
  'stream-ended': 'turn',
  'stop-requested': 'stop',
  'stop-answered': 'stop',
  'stop-failed': 'stop',
  'runs-answered': 'stop',
  'runs-failed': 'stop',
}

/** The log line of one inspected step. */
export function describeStep(step: InspectedStep, seq: number): LoggedStep {
  const commands = step.commands.map(describeCommand)
  const kind =
    kinds[step.action.type] ??
    (step.commands.some((command) => command.type === 'relay') ? 'relay' : 'other')
  return {
    seq,
    at: step.at,
    type: step.action.type,
    kind,
    detail: describeAction(step.action),
    commands,
  }
}

const counters: Partial<Record<EngineAction['type'], keyof Activity>> = {
  'read-started': 'readsStarted',
  snapshot: 'snapshots',
  'read-failed': 'readsFailed',
  'push-message': 'pushMessages',
  'push-changed': 'pushChanges',
  'relay-received': 'relayReceived',
}

/** The activity counts after one more step (the same object when it counts nothing). */
export function countActivity(activity: Activity, step: InspectedStep): Activity {
  const counter = counters[step.action.type]
  const relayed = step.commands.filter((command) => command.type === 'relay').length
  if (!counter && relayed === 0) return activity
  const next = { ...activity, relaySent: activity.relaySent + relayed }
  if (counter) next[counter] += 1
  return next
}

function describeAction(action: EngineAction): string {
  switch (action.type) {
    case 'activated':
      return action.pushConnected ? 'push connected' : 'push not connected'
    case 'draft-changed':
      return quote(action.draft)
    case 'submit-requested':
      return action.text === undefined ? 'the draft' : quote(action.text)
    case 'resume-requested':
      return `tool call ${action.toolCallId}`
    case 'post-failed':
    case 'read-failed':
    case 'stop-failed':
    case 'runs-failed':
      return errorText(action.error)
    case 'turn-events':
      return countTypes(action.events.map((event) => event.type))
    case 'stream-ended':
      return action.end.kind === 'cut' ? `cut: ${errorText(action.end.error)}` : action.end.kind
    case 'relay-received':
      return relayText(action.data)
    case 'read-wanted':
      return action.urgent ? 'urgent' : ''
    case 'push-message':
      return `${action.message.type} ${action.message.data.executionId}`
    case 'snapshot': {
      const { messages, activeExecutionId } = action.snapshot
      const source = action.fromRead ? 'read' : 'cache'
      const running = activeExecutionId ? `, running ${activeExecutionId}` : ''
      return `${source}: ${messages.length} messages${running}${action.fresh ? '' : ' (not fresh)'}`
    }
    case 'push-changed':
      return action.connected ? 'connected' : 'disconnected'
    case 'stop-answered':
      return `${action.executionId}: cancelRequested ${action.cancelRequested}`
    case 'runs-answered':
      return action.cancelled ? 'cancelled' : 'not cancelled'
    default:
      return ''
  }
}

function describeCommand(command: Command): string {
  switch (command.type) {
    case 'relay':
      return `relay ${command.message.kind}`
    case 'stop-execution':
      return `stop-execution ${command.executionId}`
    case 'settle-submit':
      return `settle-submit ${command.result.outcome}`
    case 'turn-ended':
      return `turn-ended ${command.ending.status}`
    default:
      return command.type
  }
}

function relayText(data: unknown): string {
  if (typeof data !== 'object' || data === null) return 'junk'
  const { kind, tab } = data as { kind?: unknown; tab?: unknown }
  return typeof kind === 'string' ? `${kind} from tab ${String(tab)}` : 'junk'
}

function errorText(error: { code: string; status?: number | undefined; message: string }): string {
  return `${error.code}${error.status ? ` ${error.status}` : ''}: ${error.message}`
}

function quote(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)
}

/** `text-delta ×3, done` */
function countTypes(types: string[]): string {
  const counts = new Map<string, number>()
  for (const type of types) counts.set(type, (counts.get(type) ?? 0) + 1)
  return [...counts].map(([type, n]) => (n > 1 ? `${type} ×${n}` : type)).join(', ')
}

/**
 * The engine state as JSON a person can paste into an issue: errors keep their code, status and
 * message (plain `JSON.stringify` turns an `Error` into `{}`).
 */
export function engineStateJson(state: EngineState): string {
  return JSON.stringify(
    state,
    (_key, value: unknown) =>
      value instanceof Error
        ? { name: value.name, message: value.message, ...(value as object) }
        : value,
    2,
  )
}
