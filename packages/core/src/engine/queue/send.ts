/**
 * Sending: only the tab holding the sender lock sends, one message at a time, in order, once it
 * knows the thread is free. A message is marked `sending` in the store, committed
 * (`queue-written`), before its POST goes out, so that its fate is judged, never guessed, if that
 * tab goes away. The POST is a real `submit-requested` of the engine's (an `act` command, its own
 * step), tagged with the queue's token (negative, unlike a person's `submit()`).
 */
import { errorRecord } from '../../wire/contract/errors'
import { explain } from '../../wire/contract/explain'
import { heldByAnotherTab, sessionStatus } from '../derive'
import type { Command, EngineAction, EngineState, StepEvent } from '../model'
import type { QueueState, StoredQueueItem } from './model'
import { change } from './changes'
import { handsOver, waitsHere } from './server'

/**
 * This tab may send the next queued message now: it is the sender, its store was read, a read of
 * the record answered in this session (a reload mid-turn cannot know the thread is free before
 * that), and the thread is free; or, where it hands messages to the server's queue, the message
 * sent before it was accepted (this tab's own, and another tab's that holds the gate), so that
 * they reach the server in order.
 */
export const readyToSend = (state: EngineState, queue: QueueState) =>
  queue.attached &&
  queue.sender &&
  queue.recordRead &&
  !queue.sending &&
  queue.judgeAfterRead === null &&
  // A message another tab was sending is judged first (`waitForRead`): its fate may be ahead.
  !queue.view.items.some((item) => item.status === 'sending') &&
  state.active &&
  (handsOver(queue)
    ? state.synced && state.own?.phase !== 'posting' && !heldByAnotherTab(state)
    : // Every turn this tab saw running has its ending on record (a cancelled one pauses the queue).
      state.watching.length === 0 && sessionStatus(state) === 'idle')

/** A read of the record, asked of the engine as an action of its own (its scheduler starts it). */
export const readWanted: Command = { type: 'act', action: { type: 'read-wanted', urgent: false } }

/**
 * Nothing more is sent until a read started from now answers (`judgeAfterRead`): asked of the
 * engine as an action of its own, so that its scheduler sets the alarm for it.
 */
export function waitForRead(state: EngineState, queue: QueueState, commands: Command[]) {
  commands.push(readWanted)
  return { ...queue, judgeAfterRead: state.reads.count }
}

/**
 * The message marked `sending` goes out once that mark is committed to the store: while a turn
 * runs, to the server's queue (where it has one and `keep` is the rule); when the thread is free,
 * as this tab's own turn.
 */
export function postCommitted(
  state: EngineState,
  queue: QueueState,
  commands: Command[],
): QueueState {
  const post = queue.sending
  if (!post || post.posted) return queue
  const item = queue.view.items.find((i) => i.id === post.id)
  if (!item) return { ...queue, sending: null }
  if (handsOver(queue) && sessionStatus(state) !== 'idle') {
    commands.push({ type: 'queue-post', token: post.token, id: item.id, text: item.text })
    return { ...queue, sending: { ...post, posted: true, via: 'server-queue', attempts: 1 } }
  }
  commands.push({
    type: 'act',
    action: {
      type: 'submit-requested',
      request: post.token,
      text: item.text,
      messageId: item.id,
      at: queue.clock,
    },
  })
  return { ...queue, sending: { ...post, posted: true } }
}

/**
 * The fate of the message this tab sent as its own turn, as the engine settled its `submit` (the
 * step's `submit-settled` event of its token): accepted, it is done (or the server's, where it
 * queued it); refused for sure, undelivered; busy, or refused as busy, it waits for a read to show
 * what runs, then for the thread (the engine shows no error for it: `shownError`).
 */
export function submitSettled(
  state: EngineState,
  queue: QueueState,
  events: readonly StepEvent[],
  commands: Command[],
): QueueState {
  const { sending } = queue
  if (!sending || sending.via === 'server-queue') return queue
  const settled = events.find((e) => e.type === 'submit-settled' && e.request === sending.token)
  if (settled?.type !== 'submit-settled') return queue
  const { result } = settled
  const next: QueueState = { ...queue, sending: null }
  if (result.outcome === 'accepted' && result.queueId !== undefined)
    // Taken into the server's own queue: it waits there until its turn begins on this POST.
    return {
      ...change(
        next,
        { op: 'handed', id: sending.id, queueId: result.queueId },
        { op: 'server-queue', serverQueue: true },
      ),
      handedPosts: { ...next.handedPosts, [sending.token]: sending.id },
    }
  if (result.outcome === 'accepted') return change(next, { op: 'done', id: sending.id })
  if (result.outcome === 'failed' && result.error.code !== 'turn_already_running')
    return change(next, {
      op: 'mark',
      id: sending.id,
      status: 'undelivered',
      // What the store keeps of it: JSON, read back by `parseStoredQueue`.
      error: { code: result.error.code, message: result.error.message },
    })
  return waitForRead(
    state,
    change(next, { op: 'mark', id: sending.id, status: 'queued' }),
    commands,
  )
}

/**
 * Messages another tab was sending (closed since, or reloaded), judged by a read started after
 * this tab found them: sent again where the server dedupes, else undelivered ("may have been sent").
 */
export function judgeOrphans(state: EngineState, queue: QueueState, action: EngineAction) {
  if (
    action.type !== 'snapshot' ||
    !action.fromRead ||
    queue.judgeAfterRead === null ||
    state.reads.count <= queue.judgeAfterRead
  )
    return queue
  const again = queue.view.dedupes === true
  let next = queue
  for (const item of queue.view.items)
    if (item.status === 'sending' && item.id !== queue.sending?.id)
      next = change(
        next,
        again
          ? { op: 'mark', id: item.id, status: 'queued' }
          : { op: 'mark', id: item.id, status: 'undelivered', error: mayHaveBeenSent },
      )
  return { ...next, judgeAfterRead: null }
}

/**
 * Waits here and no pause holds it: the sender sends it when its turn comes. A message queued
 * after a pause goes, the held ones ahead of it waiting for `resumeQueue()`.
 */
export const sendable = (item: StoredQueueItem) => waitsHere(item) && !item.held

/** The next message to send, chosen inside the store's transaction (`queue-locked`). */
export const nextToSend = (state: EngineState, queue: QueueState) =>
  readyToSend(state, queue) ? queue.stored.items.find(sendable) : undefined

const mayHaveBeenSent = errorRecord(
  'network_error',
  'This message was being sent from a tab that closed or reloaded before the server answered, ' +
    'and this server cannot tell a second copy from a new message: it may have been sent. Check ' +
    'the conversation, then send it again (send now) or remove it.' +
    explain('maybe-sent'),
)
