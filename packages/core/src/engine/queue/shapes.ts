/**
 * The queue part's share of the trace's shapes (`../shapes.ts` composes every part's): its actions'
 * fields by type and its key of the engine state, each table typed against the queue's model, so a
 * queue action or field added there and not here fails the typecheck.
 */
import {
  array,
  boolean,
  isRecord,
  literal,
  nullable,
  number,
  object,
  optional,
  picklist,
  record,
  string,
  variant,
  type Schema,
} from '../../wire/contract/schema'
import { turnEvent } from '../relay'
import { anError, anObject, anything, type EveryField, type PartShapes } from '../shapeKit'
import type { QueueAction, QueueState } from './model'
import type { QueuedState } from './state'
import { storedSchema } from './stored'
import type { EngineState } from '../model'

/** What the host heard of a hand-over (`QueuePostHeard`): one of three, by its one field. */
const heard: Schema<unknown> = (input, issues, path) => {
  if (!isRecord(input)) return anObject(input, issues, path)
  const one = [object({ event: turnEvent }), object({ cut: anError }), object({ failed: anError })][
    Object.hasOwn(input, 'event') ? 0 : Object.hasOwn(input, 'cut') ? 1 : 2
  ] as Schema<unknown>
  return one(input, issues, path)
}
const qid = { queueId: string }
const call = variant(
  {
    edit: object({ op: literal('edit'), ...qid, text: string }),
    remove: object({ op: literal('remove'), ...qid }),
    reorder: object({
      op: literal('reorder'),
      ...qid,
      targetQueueId: string,
      expectedQueueIds: array(string),
    }),
    steer: object({ op: literal('steer'), ...qid, executionId: string }),
  },
  'op',
)
const whenStopped = picklist(['keep', 'pause', 'draft'])

const item = object({
  id: string,
  text: string,
  status: picklist(['queued', 'sending', 'undelivered']),
  error: optional(anError),
  by: optional(string),
  queueId: optional(string),
})
const id = { id: string }
/** One change of the queue (`QueueChange`), by `op`. */
const queueChange = variant(
  {
    add: object({ op: literal('add'), item }),
    edit: object({ op: literal('edit'), ...id, text: string }),
    remove: object({ op: literal('remove'), ...id }),
    done: object({ op: literal('done'), ...id }),
    move: object({ op: literal('move'), ...id, before: nullable(string) }),
    front: object({ op: literal('front'), ...id, retry: optional(literal(true)) }),
    mark: object({
      op: literal('mark'),
      ...id,
      status: picklist(['queued', 'sending', 'undelivered']),
      error: optional(anError),
      by: optional(string),
    }),
    hold: object({ op: literal('hold'), ids: array(string) }),
    resume: object({ op: literal('resume') }),
    dedupes: object({ op: literal('dedupes'), dedupes: boolean }),
    'server-queue': object({ op: literal('server-queue'), serverQueue: boolean }),
    stopped: object({ op: literal('stopped'), executionId: string }),
    'server-changed': object({ op: literal('server-changed') }),
    handed: object({ op: literal('handed'), ...id, queueId: string }),
  },
  'op',
)
const changes = array(queueChange)

const queueFields: EveryField<QueueState> = {
  stored: storedSchema,
  pending: changes,
  view: storedSchema,
  writing: nullable(object({ changes, before: storedSchema })),
  locking: boolean,
  unwritten: optional(nullable(object({ attempts: number, retryAt: number }))),
  sender: boolean,
  whenStopped,
  sending: nullable(
    object({
      ...id,
      token: number,
      posted: boolean,
      via: optional(literal('server-queue')),
      attempts: optional(number),
    }),
  ),
  attached: boolean,
  kept: boolean,
  recordRead: boolean,
  sends: number,
  judgeAfterRead: nullable(number),
  clock: number,
  server: nullable(
    object({
      steerable: nullable(string),
      items: array(object({ queueId: string, text: string, steering: boolean })),
    }),
  ),
  serverReads: object({ asked: number, applied: number, inFlight: boolean, wanted: boolean }),
  handedAt: record(number),
  handedPosts: record(string),
}

/** The queue's actions and its key of the engine state (`queue`), as a trace holds them. */
export const queueShapes: PartShapes<QueueAction, Omit<QueuedState, keyof EngineState>> = {
  actions: {
    'queue-attached': { stored: anything, kept: boolean, whenStopped, at: number },
    'queue-store-refused': { error: anError },
    'queue-stored': { stored: anything },
    'queue-locked': { stored: anything },
    'queue-written': {},
    'queue-store-failed': { error: anError },
    'queue-sender': { held: boolean },
    'queue-edit': { id: string, text: string },
    'queue-remove': { id: string },
    'queue-reorder': { id: string, to: number },
    'queue-send-now': { id: string },
    'queue-resume': {},
    'queue-server-changed': {
      thread: object({ projectId: string, agentId: string, threadId: string }),
    },
    'queue-server-read': { seq: number },
    'queue-posted': { token: number, heard },
    'queue-called': { call, error: nullable(anError), conflict: nullable(string) },
    'queue-leaving': {},
  },
  state: { queue: optional(object(queueFields)) },
}
