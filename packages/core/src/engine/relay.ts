/**
 * The protocol between the tabs of one origin, so that a second tab follows a turn token by token
 * instead of snapshot by snapshot. It is a wire like the server's: every message carries the
 * protocol version and the sending tab's id, and what arrives is parsed, never trusted (another
 * build of the app, or anything else, may post on the same channel).
 *
 * - `posting`: the tab sent a message whose turn has not begun (`active: true`), or the message
 *   was not taken up (`active: false`). The other tabs hold their gate in between, per tab.
 * - `turn`: the whole live turn, as the streaming tab folded it (`seq`: batches in it so far).
 * - `events`: the next batch of the turn's events, numbered by `seq`.
 * - `sync`: a tab that joined mid-turn or missed a batch asks for the whole turn.
 */
import { turnEventFrom, type TurnEvent } from '../wire/contract/events'
import {
  array,
  boolean,
  FAIL,
  isRecord,
  literal,
  nullable,
  number,
  object,
  optional,
  record,
  run,
  string,
  unknown,
  variant,
  type Schema,
} from '../wire/contract/schema'
import { messageSchema } from '../wire/contract/snapshot'
import type { LiveTurn } from './fold'

/** The version of this protocol; a message of another version is ignored. */
export const RELAY_VERSION = 1

export type RelayBody =
  | { kind: 'posting'; active: boolean }
  /** `after`: for a turn that goes by a stand-in id, the executions its tab saw ended before it. */
  | { kind: 'turn'; turn: LiveTurn; seq: number; after?: readonly string[] }
  | { kind: 'events'; executionId: string; seq: number; events: TurnEvent[] }
  | { kind: 'sync'; executionId: string }

/** One message between tabs: the thread it is about (`[projectId, agentId, threadId]` as JSON). */
export type RelayMessage = RelayBody & { v: typeof RELAY_VERSION; tab: string; thread: string }

/** The relay part's action: anything that arrived on the relay channel, parsed by the part, never trusted. */
export type RelayAction = { type: 'relay-received'; data: unknown; at: number; stampedAt: number }

/** The relay part's command: post `message` to the other tabs (the relay's host performs it). */
export type RelayCommand = { type: 'relay'; message: RelayMessage }

/** One turn event, as a stream or the relay carries it. */
export const turnEvent: Schema<TurnEvent> = (input, issues, path) => {
  const parsed = turnEventFrom(input)
  if (parsed.kind === 'event') return parsed.event
  issues?.push(`${path || '(root)'}: not a turn event of this client`)
  return FAIL
}

/** A live turn, as the relay and storage carry it. */
export const liveTurn = /* @__PURE__ */ object({
  executionId: string,
  sessionId: string,
  user: /* @__PURE__ */ nullable(messageSchema),
  assistant: messageSchema,
  streams: /* @__PURE__ */ record(number),
  delegations: /* @__PURE__ */ record(
    /* @__PURE__ */ object({ used: number, openSegment: /* @__PURE__ */ nullable(number) }),
  ),
  resumes: /* @__PURE__ */ nullable(
    /* @__PURE__ */ object({ toolCallId: string, toolName: string, input: unknown }),
  ),
  ended: boolean,
  after: /* @__PURE__ */ optional(/* @__PURE__ */ array(string)),
}) as Schema<LiveTurn>

// Each message's schema: the header every message carries, its kind, its fields. A function, not
// a spread of a shared header (a spread may run getters, so a bundler keeps it): the schemas are
// pure, and a bundle without the relay (the minimal profile) drops them.
const relayBody = <K extends RelayBody['kind']>(kind: K, fields: Record<string, Schema<unknown>>) =>
  object({ v: literal(RELAY_VERSION), tab: string, thread: string, kind: literal(kind), ...fields })
const relaySchema = /* @__PURE__ */ variant(
  {
    posting: /* @__PURE__ */ relayBody('posting', { active: boolean }),
    turn: /* @__PURE__ */ relayBody('turn', {
      turn: liveTurn,
      seq: number,
      after: /* @__PURE__ */ optional(/* @__PURE__ */ array(string)),
    }),
    events: /* @__PURE__ */ relayBody('events', {
      executionId: string,
      seq: number,
      events: /* @__PURE__ */ array(turnEvent),
    }),
    sync: /* @__PURE__ */ relayBody('sync', { executionId: string }),
  } satisfies Record<RelayBody['kind'], Schema<unknown>>,
  'kind',
) as Schema<RelayMessage>

/** A live turn from outside (another tab, or storage), checked; `null` when it is not one. */
export function parseLiveTurn(data: unknown): LiveTurn | null {
  const turn = liveTurn(data)
  return turn === FAIL ? null : turn
}

export type RelayParseResult =
  | { kind: 'message'; message: RelayMessage }
  /** Not a message of this protocol: `reason` says why, for one warning. */
  | { kind: 'invalid'; reason: string }

/** Checks what arrived on the relay channel. Never throws, whatever the value. */
export function parseRelayMessage(posted: unknown): RelayParseResult {
  // A channel's structured clone carries what no wire can (a BigInt, a cycle, a Map in a tool's
  // input), and what the tab then renders, keeps or relays must be JSON: it is made JSON here.
  let data: unknown
  try {
    data = JSON.parse(JSON.stringify(posted)) as unknown
  } catch {
    return { kind: 'invalid', reason: 'not a JSON value' }
  }
  if (!isRecord(data)) return { kind: 'invalid', reason: 'not an object' }
  if (data.v !== RELAY_VERSION)
    return { kind: 'invalid', reason: `not of relay protocol version ${RELAY_VERSION}` }
  const { value, issues } = run(relaySchema, data)
  return issues
    ? { kind: 'invalid', reason: issues.slice(0, 2).join('; ') }
    : { kind: 'message', message: value }
}
