/**
 * The queue's stored format: what the store keeps of a thread's queue (a string, shared by the
 * scope's tabs and read back by every later page), parsed there, never trusted.
 */
import {
  array,
  boolean,
  literal,
  nullable,
  number,
  object,
  optional,
  picklist,
  string,
  FAIL,
  type Schema,
} from '../../wire/contract/schema'
import type { ErrorRecord } from '../../wire/contract/errors'
import { explain } from '../../wire/contract/explain'
import type { Command } from '../model'
import type { QueueChange, StoredQueue } from './model'
import { applyAll } from './changes'
import { waitsHere } from './server'

export const emptyQueue: StoredQueue = {
  items: [],
  dedupes: null,
  serverQueue: null,
  serverRev: 0,
}

/** The version of the stored queue's shape: another one is not read (it is replaced on write). */
export const QUEUE_VERSION = 1

const errorSchema: Schema<ErrorRecord> = object({
  code: string,
  message: string,
}) as Schema<ErrorRecord>

/** What the store holds, parsed (`parseStoredQueue`; the queue part's trace shapes: `shapes.ts`). */
export const storedSchema = object({
  v: picklist([String(QUEUE_VERSION)]),
  items: array(
    object({
      id: string,
      text: string,
      status: picklist(['queued', 'sending', 'undelivered']),
      error: optional(errorSchema),
      by: optional(string),
      queueId: optional(string),
      held: optional(literal(true)),
    }),
  ),
  // Written for a page of an earlier version, which held the whole queue by it: read from such a
  // page's write (no message `held`) as every waiting message held.
  paused: optional(boolean),
  dedupes: nullable(boolean),
  // Absent in what an earlier version wrote: not known.
  serverQueue: optional(nullable(boolean)),
  serverRev: optional(number),
  stopped: optional(array(string)),
})

/** What the store holds (a string from another tab, or from an older page), parsed; never trusted. */
export function parseStoredQueue(raw: unknown): StoredQueue | { problem: string } {
  if (raw === null || raw === undefined) return emptyQueue
  let json: unknown
  try {
    json = typeof raw === 'string' ? JSON.parse(raw) : FAIL
  } catch {
    json = FAIL
  }
  const parsed = json === FAIL ? FAIL : storedSchema(json)
  if (parsed === FAIL) return { problem: 'is not a queue this version of preview-chat wrote' }
  const ids = new Set<string>()
  const unique = parsed.items.filter((item) => !ids.has(item.id) && ids.add(item.id))
  // Only a waiting message is held (a hand edit may say otherwise).
  const legacy = parsed.paused === true && !unique.some((item) => item.held)
  const items = unique.map(({ held, ...item }) =>
    (held || legacy) && waitsHere(item) ? { ...item, held: true as const } : item,
  )
  return {
    items,
    dedupes: parsed.dedupes,
    serverQueue: parsed.serverQueue ?? null,
    serverRev: parsed.serverRev ?? 0,
    ...(parsed.stopped && parsed.stopped.length > 0 && { stopped: parsed.stopped }),
  }
}

/** The stored queue as the store keeps it (`parseStoredQueue` reads it back). */
export const serializeQueue = (queue: StoredQueue): string =>
  JSON.stringify({ v: String(QUEUE_VERSION), ...queue, paused: isPaused(queue) })

/** A message of it waits, held by a pause (`StoredQueueItem.held`): `resumeQueue()` sends it. */
export const isPaused = (queue: StoredQueue) => queue.items.some((item) => item.held === true)

/** What a `queue-flush` writes: `changes` applied to what the store holds (junk read as empty). */
export function flushedQueue(raw: unknown, changes: readonly QueueChange[]): StoredQueue {
  const parsed = parseStoredQueue(raw)
  return applyAll('problem' in parsed ? emptyQueue : parsed, changes)
}

/**
 * What the store is given to write (`queue-store`, `queue-flush`): `null` (the key removed) for a
 * queue that holds nothing worth keeping.
 */
export function storedValue(stored: StoredQueue): string | null {
  // A Stop it remembers is kept: its cancelled ending, heard later, holds no message queued since.
  const empty = stored.items.length === 0 && stored.dedupes === null && !stored.stopped
  return empty ? null : serializeQueue(stored)
}

/** A stored value that cannot be read is reported, and read as an empty queue (nothing throws). */
export function readStored(raw: unknown, commands: Command[]): StoredQueue {
  const parsed = parseStoredQueue(raw)
  if ('problem' in parsed) {
    commands.push({
      type: 'warn',
      message: `The stored message queue ${parsed.problem}: it is read as empty, and written anew.${explain('stored-queue-unreadable')}`,
    })
    return emptyQueue
  }
  return parsed
}
