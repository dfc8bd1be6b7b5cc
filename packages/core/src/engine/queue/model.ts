/**
 * The queue part's model: its state (kept under its own key, `queue`, of the engine state, which
 * the engine's steps carry through untouched), its actions and its commands. Only the queue's
 * modules (`engine/queue/`, `effects/queueHost.ts`, `queue.ts`) name them; the engine declares none
 * of its fields.
 */
import type { TurnEvent } from '../../wire/contract/events'
import type { ThreadKey } from '../../wire/contract/ids'
import type { ErrorRecord } from '../../wire/contract/errors'

/** What a Stop, or a turn that failed, does to the messages still queued. */
export type WhenStopped = 'keep' | 'pause' | 'draft'

/** A queued message, as the store keeps it (shared by every tab of the scope). */
export interface StoredQueueItem {
  /** The message's client id: its `messageId` on the wire, its id in the record. */
  id: string
  text: string
  /**
   * `queued`: waiting; `sending`: a tab (`by`) posted it and its fate is not known yet;
   * `undelivered`: it could not be sent, or may have been (`error` says which); the person decides.
   */
  status: 'queued' | 'sending' | 'undelivered'
  error?: ErrorRecord
  /** The tab sending it. */
  by?: string
  /**
   * The server took it into its own queue (`message-queued`) as this item: it waits there, and
   * leaves this queue once a read of the server's queue no longer lists it, or the record holds it.
   */
  queueId?: string
  /**
   * A Stop, or a turn that failed, paused it while it waited (`whenStopped: 'pause'`): it is not
   * sent until `resumeQueue()` or "send now". A message queued after that pause is not held by it.
   */
  held?: true
}

/**
 * A thread's queue as the store keeps it. It is paused while a message of it is `held` (the
 * stored form also says `paused`, for a page of an earlier version).
 */
export interface StoredQueue {
  items: readonly StoredQueueItem[]
  /** The server dedupes by `messageId`, as a tab learnt it (`null`: not known). */
  dedupes: boolean | null
  /** The server has a queue of its own (`message-queued`), as a tab learnt it (`null`: not known). */
  serverQueue: boolean | null
  /**
   * Changes a tab made to the server's queue (edits, removals, moves, steers): one more tells the
   * other tabs to read it again, where no push says so.
   */
  serverRev: number
  /**
   * The last executions whose Stop, pressed in a tab of the scope, paused the queue (`pause`):
   * their cancelled ending pauses it no more, so a resume pressed before that ending reached the
   * sender stands. Absent: none.
   */
  stopped?: readonly string[]
}

/** The server's own queue of the thread, as this tab last read it (`GET …/chat/:threadId/queue`). */
export interface ServerQueueView {
  /** The running execution a queued message can be steered into now. */
  steerable: string | null
  /** In the server's order: accepted steers first, then what waits. */
  items: readonly { queueId: string; text: string; steering: boolean }[]
}

/** A change asked of the server's queue (its routes, `next-era.md`). */
export type ServerQueueCall =
  | { op: 'edit'; queueId: string; text: string }
  | { op: 'remove'; queueId: string }
  /** `queueId` takes `targetQueueId`'s place; `expectedQueueIds`: the pending order as shown. */
  | { op: 'reorder'; queueId: string; targetQueueId: string; expectedQueueIds: string[] }
  /** Into the running turn `executionId`. */
  | { op: 'steer'; queueId: string; executionId: string }

/**
 * What the host heard of a message handed to the server's queue (`queue-post`), raw: the stream's
 * first event, the stream cut before any, or the POST failed. The reducer reads it
 * (`engine/queue/handOver.ts`).
 */
export type QueuePostHeard = { event: TurnEvent } | { cut: ErrorRecord } | { failed: ErrorRecord }

/**
 * How the reducer reads a hand-over's answer: taken into the queue; a bare `done` (a retry of one
 * taken already); taken up at once; refused; or no answer at all.
 */
export type QueuePostAnswer =
  | { kind: 'queued'; queueId: string }
  | { kind: 'duplicate' }
  | { kind: 'started' }
  | { kind: 'refused'; error: ErrorRecord }
  | { kind: 'lost'; error: ErrorRecord }

/** One change to a queue: what a tab asks, applied to what the store holds when it writes. */
export type QueueChange =
  | { op: 'add'; item: StoredQueueItem }
  | { op: 'edit'; id: string; text: string }
  /** The person removed it (not while it is `sending`). */
  | { op: 'remove'; id: string }
  /** Its fate is known (its turn began, or the record holds it): it leaves the queue. */
  | { op: 'done'; id: string }
  /** Move `id` before `before` (`null`: to the end). */
  | { op: 'move'; id: string; before: string | null }
  /**
   * To the front, to be sent next (`sendQueuedNow`). `retry`: the person chose to send again one
   * they saw `undelivered`; without it, an item found `undelivered` by then stays so (a change made
   * on a stale view never sends twice what may have been sent).
   */
  | { op: 'front'; id: string; retry?: true }
  | { op: 'mark'; id: string; status: StoredQueueItem['status']; error?: ErrorRecord; by?: string }
  /** A Stop or a failed turn paused these (`held`): each that still waits when it is written. */
  | { op: 'hold'; ids: readonly string[] }
  /** `resumeQueue()`: nothing is held any more. */
  | { op: 'resume' }
  | { op: 'dedupes'; dedupes: boolean }
  | { op: 'server-queue'; serverQueue: boolean }
  /** A Stop of this execution paused the queue (`StoredQueue.stopped`). */
  | { op: 'stopped'; executionId: string }
  /** This tab changed the server's queue: `serverRev` goes up. */
  | { op: 'server-changed' }
  /** It is in the server's own queue as `queueId` (`message-queued`). */
  | { op: 'handed'; id: string; queueId: string }

/** The queue's part of the engine state (`withQueue`, `engine/queue/`). */
export interface QueueState {
  /** What the store held when this tab last read or wrote it. */
  stored: StoredQueue
  /** This tab's changes not written yet (they wait for the store's next transaction). */
  pending: readonly QueueChange[]
  /** `stored` with `pending` applied: what the UI shows. */
  view: StoredQueue
  /**
   * The changes the transaction in progress writes, and what the store held before them: given
   * back to `pending` if it fails (`queue-store-failed`), so that nothing of them is lost.
   */
  writing: { changes: readonly QueueChange[]; before: StoredQueue } | null
  /** A transaction of the store is asked for (`queue-lock`) and has not run yet. */
  locking: boolean
  /**
   * The store refused this tab's last write (a full quota: `QuotaExceededError`): its changes wait
   * in `pending`, the queue works on from this tab's memory (a message it marked `sending` is sent
   * all the same), and the write is tried again at `retryAt` (scheduler time; `attempts` so far),
   * not only at a next step an idle thread may never take. `null`: written as it should be.
   */
  unwritten: { attempts: number; retryAt: number } | null
  /** This tab holds the thread's sender lock: it alone sends queued messages. */
  sender: boolean
  whenStopped: WhenStopped
  /**
   * The queued message this tab sends: its POST's token, whether it went out, and how: through
   * the engine (a turn of this tab), or handed to the server's own queue (`queue-post`), and how
   * many times (a second only where the server dedupes).
   */
  sending: {
    id: string
    token: number
    posted: boolean
    via?: 'server-queue'
    attempts?: number
  } | null
  /** The store was opened and read (`queue-attached`): until then, changes only wait. */
  attached: boolean
  /** The store keeps the queue across reloads (IndexedDB); `false`: this document's memory only. */
  kept: boolean
  /**
   * A read of the record answered in this session (or it said the thread does not exist): until
   * then the queue sends nothing, since it cannot know the thread is free (a reload mid-turn).
   */
  recordRead: boolean
  /** Queued messages this tab posted so far (their tokens are `-1`, `-2`, …). */
  sends: number
  /**
   * Reads started when this sender found messages another tab was sending (closed since, or
   * reloaded), or when a queued message was refused as busy: nothing is sent until a read started
   * after it answers (it says which messages the server took, and what runs); `null`: no wait.
   */
  judgeAfterRead: number | null
  /** The scheduler time of the last action that had one: when a queued message is posted. */
  clock: number
  /** The server's own queue as last read (`null`: not read, or the server has none). */
  server: ServerQueueView | null
  /** Reads of the server's queue: asked so far, the last one applied, one in flight, one wanted. */
  serverReads: { asked: number; applied: number; inFlight: boolean; wanted: boolean }
  /**
   * Per item in the server's queue that this queue holds (`queueId`): how many reads of the
   * server's queue were asked when this tab learnt of it. A read asked after that which does not
   * list it shows it was taken up (or removed): it leaves this queue.
   */
  handedAt: Readonly<Record<string, number>>
  /**
   * Queued messages this tab posted as its own turn that the server took into its queue: by POST
   * token. The turn begins on that POST (`execution-started`), and the message leaves the queue then.
   */
  handedPosts: Readonly<Record<number, string>>
}

/** The queue's actions (`@preview-chat/core/queue`): the engine without it takes none of them. */
export type QueueAction =
  /**
   * The queue's store was opened (`queue-open`): what it held (`stored`: the raw string, or
   * `null`), whether it is kept across reloads (`kept`: IndexedDB; `false`: this document's
   * memory), and the settings.
   */
  | { type: 'queue-attached'; stored: unknown; kept: boolean; whenStopped: WhenStopped; at: number }
  /** The queue's store could not be opened or read (`queue-open`): IndexedDB refused, say. */
  | { type: 'queue-store-refused'; error: ErrorRecord }
  /** A tab (another, or this one's other client) wrote the queue (`stored`: what it holds now, raw). */
  | { type: 'queue-stored'; stored: unknown }
  /** This tab holds the store's transaction (`queue-lock`); `stored`: what it holds now (raw). */
  | { type: 'queue-locked'; stored: unknown }
  /** That transaction's write (`queue-store`) is committed: a message marked `sending` may go. */
  | { type: 'queue-written' }
  /**
   * That transaction failed (a full disk, a refused IndexedDB), before or after the reducer's
   * `queue-locked`: nothing of it was written.
   */
  | { type: 'queue-store-failed'; error: ErrorRecord }
  /**
   * This tab got (`stored`: what the store holds then, raw) or gave up the thread's sender lock.
   * The new sender starts from the store as it is, not from change notices still on their way.
   */
  | { type: 'queue-sender'; held: true; stored: unknown }
  | { type: 'queue-sender'; held: false }
  | { type: 'queue-edit'; id: string; text: string }
  | { type: 'queue-remove'; id: string }
  /** Move `id` to position `to` of the queue as shown. */
  | { type: 'queue-reorder'; id: string; to: number }
  | { type: 'queue-send-now'; id: string }
  | { type: 'queue-resume' }
  /**
   * A push `agentMessageQueueUpdated` arrived, checked: the thread it names (push goes to every
   * member of a project; the reducer keeps this thread's).
   */
  | { type: 'queue-server-changed'; thread: ThreadKey }
  /** A read of the server's queue (`queue-read-server` number `seq`) answered, checked. */
  | { type: 'queue-server-read'; seq: number; server: ServerQueueView }
  | { type: 'queue-server-read'; seq: number; error: ErrorRecord }
  /** A message handed to the server's queue (`queue-post`) was answered. */
  | { type: 'queue-posted'; token: number; heard: QueuePostHeard }
  /** A change of the server's queue (`queue-call`) was answered; `conflict`: its 409's reason. */
  | {
      type: 'queue-called'
      call: ServerQueueCall
      error: ErrorRecord | null
      conflict: string | null
    }
  /** The page is being left (`pagehide`): what is not written yet is written now (`queue-flush`). */
  | { type: 'queue-leaving' }

/** The queue's commands, performed by its host (`effects/queueHost.ts`). */
export type QueueCommand =
  /**
   * Open a read-modify-write transaction of the thread's queue: dispatch `queue-locked` with what
   * the store holds, write the `queue-store` that step returns, then dispatch `queue-written`.
   */
  | { type: 'queue-lock' }
  /** Write the queue (inside that transaction, so no other tab's write is lost between). */
  | { type: 'queue-store'; stored: StoredQueue }
  /**
   * The page goes (disposed, or `pagehide`) with changes not written yet: apply them to what the
   * store holds and write it, in a transaction started at once (a page that is gone runs no later
   * step), so that a message written just before is not lost.
   */
  | { type: 'queue-flush'; changes: readonly QueueChange[] }
  /** Read the server's own queue of the thread; answer with `queue-server-read` of this `seq`. */
  | { type: 'queue-read-server'; seq: number }
  /**
   * Hand a queued message to the server's own queue: POST it (same `messageId`), read its stream
   * only until the server's first word (`message-queued`, a bare `done`, `execution-started` or an
   * error), then close it and answer with `queue-posted`. The turn, once taken up, is followed as
   * any other.
   */
  | { type: 'queue-post'; token: number; id: string; text: string }
  /** Ask a change of the server's queue; answer with `queue-called`. */
  | { type: 'queue-call'; call: ServerQueueCall }
  /**
   * Open the thread's queue store and read it: answer `queue-attached`, or `queue-store-refused`;
   * from then on, tell of other tabs' writes (`queue-stored`) and of the page being left
   * (`queue-leaving`).
   */
  | { type: 'queue-open' }
  /** Use this document's memory store instead (IndexedDB refused), then open it as `queue-open`. */
  | { type: 'queue-fallback' }
  /**
   * Follow the thread's queue: hear the server's queue pushes (`queue-server-changed`) and ask
   * for the sender lock (`queue-sender`).
   */
  | { type: 'queue-follow' }
  /** Stop following: the lock given up (or no longer asked), the pushes no longer heard. */
  | { type: 'queue-unfollow' }
  /** The session is gone: close the store's watch and abort the queue's requests. */
  | { type: 'queue-close' }
