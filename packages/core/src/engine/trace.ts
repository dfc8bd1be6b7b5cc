/**
 * A run of the engine kept as data. Every action, state and command is plain JSON (errors are
 * `ErrorRecord`s, never class instances), so a run can be written down — the devtools export one,
 * the model suite writes the run that broke an invariant — and replayed through `reduce` later: a
 * kept trace is a regression test that says at which step, and where in the state, the engine
 * now decides differently.
 */
import type { Command, EngineAction, EngineConfig, EngineState, Reducer, Step } from './model'
import { reduce } from './reduce'
import { ACTION_TYPES, actionSchemas, configSchema, stateSchema } from './shapes'
import { hasOwn, run } from '../wire/contract/schema'

/** The version of the trace format; a trace of another version is refused, not guessed at. */
export const TRACE_VERSION = 2

/** One action through the reducer and what it returned. */
export interface TraceStep {
  action: EngineAction
  commands: Command[]
  state: EngineState
}

/** Where a run started, and each step of it. */
export interface EngineTrace {
  version: typeof TRACE_VERSION
  config: EngineConfig
  initial: EngineState
  steps: TraceStep[]
}

/** Where a replay first decided otherwise than the trace says. */
export interface TraceDivergence {
  /** The step's index in `trace.steps`. */
  step: number
  action: EngineAction['type']
  /** The first differing place, as a dot path from the step (`state.own.token`, `commands.0.type`). */
  path: string
  expected: unknown
  actual: unknown
}

/**
 * Keeps the steps of a run as they happen (the runner's `onStep`), by reference: the engine's
 * states are never mutated, so keeping them costs no copy.
 */
export function traceRecorder(initial: EngineState, config: EngineConfig) {
  const steps: TraceStep[] = []
  return {
    onStep(action: EngineAction, step: Step): void {
      steps.push({ action, commands: step.commands, state: step.state })
    },
    /** The run so far, as a trace (JSON-ready: `JSON.stringify` writes it whole). */
    trace(): EngineTrace {
      return { version: TRACE_VERSION, config, initial, steps: [...steps] }
    },
  }
}

/**
 * Replays `trace` through `reduce` (or the reducer the run had: `withQueue(reduce)` for a client
 * with a queue) from its first state: `null` when every step returns the commands and state the
 * trace kept, or the first divergence. Compared as JSON, as a trace is stored (a field that is
 * `undefined` is as good as absent).
 */
export function replayTrace(trace: EngineTrace, reducer: Reducer = reduce): TraceDivergence | null {
  let state = trace.initial
  for (const [index, kept] of trace.steps.entries()) {
    const step = reducer(state, kept.action, trace.config)
    const difference = firstDifference(
      asJson({ commands: kept.commands, state: kept.state }),
      asJson({ commands: step.commands, state: step.state }),
      '',
    )
    if (difference) return { step: index, action: kept.action.type, ...difference }
    state = step.state
  }
  return null
}

/**
 * Why a trace was refused by `parseTrace`: `step` (its index in `steps`) and `actionType` when one
 * step is at fault, and each `issues` line a `path: what is wrong` (`steps.3.action.at: missing`).
 */
export class TraceError extends TypeError {
  override readonly name = 'TraceError'
  readonly step: number | null
  readonly actionType: string | null
  readonly issues: readonly string[]
  constructor(
    message: string,
    where: { step?: number; actionType?: string; issues?: readonly string[] } = {},
  ) {
    super(message)
    this.step = where.step ?? null
    this.actionType = where.actionType ?? null
    this.issues = where.issues ?? []
  }
}

/** The first few issues, and how many more: a message a person reads whole. */
const listed = (issues: readonly string[]) =>
  issues.length > 4
    ? `${issues.slice(0, 4).join('; ')}; and ${issues.length - 4} more`
    : issues.join('; ')

/**
 * A trace from JSON (a file, a devtools export), checked for its version and shape before any of
 * it reaches the reducer: its `config` and `initial` state have the fields the reducer reads, and
 * each step's action is of a type this engine takes (`ACTION_TYPES`, the queue's among them)
 * with that type's fields. Throws a `TraceError` that says which step, which type, which field.
 */
export function parseTrace(json: unknown): EngineTrace {
  const trace = json as Partial<EngineTrace> | null
  if (typeof trace !== 'object' || trace === null) throw new TraceError('A trace is a JSON object.')
  if (trace.version !== TRACE_VERSION)
    throw new TraceError(
      `This trace is of version ${String(trace.version)}; this engine replays version ${TRACE_VERSION} only.`,
    )
  if (!isObject(trace.config) || !isObject(trace.initial) || !Array.isArray(trace.steps))
    throw new TraceError('A trace has `config`, `initial` and `steps` (an array).')
  for (const [name, schema] of [
    ['config', configSchema],
    ['initial', stateSchema],
  ] as const) {
    const { issues } = run(schema, trace[name], name)
    if (issues)
      throw new TraceError(
        `The trace's \`${name}\` is not the engine's ${name === 'config' ? 'config' : 'state'} (a trace of another build, or edited?): ${listed(issues)}.`,
        { issues },
      )
  }
  trace.steps.forEach((step: unknown, index) => {
    const { action, commands, state } = (step ?? {}) as Partial<TraceStep>
    if (
      !isObject(action) ||
      typeof action.type !== 'string' ||
      !Array.isArray(commands) ||
      !isObject(state)
    )
      throw new TraceError(
        `Step ${index} of the trace needs an \`action\` with a \`type\`, \`commands\` and a \`state\`.`,
        { step: index },
      )
    const actionType = action.type
    if (!hasOwn(actionSchemas, actionType))
      throw new TraceError(
        `Step ${index}'s action is of type "${actionType}", which this engine does not take (a trace of a newer build?). It takes: ${ACTION_TYPES.join(', ')}.`,
        { step: index, actionType },
      )
    const { issues } = run(actionSchemas[actionType], action, `steps.${index}.action`)
    if (issues)
      throw new TraceError(
        `Step ${index}'s action "${actionType}" lacks what the reducer reads: ${listed(issues)}.`,
        { step: index, actionType, issues },
      )
  })
  return trace as EngineTrace
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown

function firstDifference(
  expected: unknown,
  actual: unknown,
  path: string,
): { path: string; expected: unknown; actual: unknown } | null {
  if (Object.is(expected, actual)) return null
  const bothObjects =
    typeof expected === 'object' &&
    expected !== null &&
    typeof actual === 'object' &&
    actual !== null &&
    Array.isArray(expected) === Array.isArray(actual)
  if (!bothObjects) return { path: path || '.', expected, actual }
  const a = expected as Record<string, unknown>
  const b = actual as Record<string, unknown>
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const found = firstDifference(a[key], b[key], path ? `${path}.${key}` : key)
    if (found) return found
  }
  return null
}
