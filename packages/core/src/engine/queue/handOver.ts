/**
 * Handing a queued message to the server's own queue (`whenStopped: 'keep'` on a server that
 * queues, `next-era.md`): the hand-over's POST, and how its answer is read. The host reads the
 * stream only until its first word and hands that word over raw (`queue-posted`); what it means
 * is decided here, once.
 */
import { withId } from '../../wire/contract/ids'
import { errorRecord, inBandError } from '../../wire/contract/errors'
import { explain } from '../../wire/contract/explain'
import type { Command, EngineAction, EngineState, Step } from '../model'
import type { QueuePostAnswer, QueuePostHeard, QueueState } from './model'
import type { QueuedState } from './state'
import { step } from '../slices/common'
import { mayHaveBeenTaken } from '../slices/ownTurn'
import { change } from './changes'
import { readWanted } from './send'
import { wantServerRead } from './server'

/**
 * What the host heard, read: the first event says taken into the queue (`message-queued`),
 * refused (an in-band `error`), taken already (a bare `done`: the server dedupes a second POST),
 * or taken up at once; a stream cut before any word, or a POST with no usable answer, may have
 * been taken (`lost`); any other failure was a refusal.
 */
export function handOverAnswer(heard: QueuePostHeard): QueuePostAnswer {
  if ('event' in heard) {
    const { event } = heard
    if (event.type === 'message-queued') return { kind: 'queued', queueId: event.queueId }
    if (event.type === 'error') return { kind: 'refused', error: inBandError(event) }
    return event.type === 'done' ? { kind: 'duplicate' } : { kind: 'started' }
  }
  if ('cut' in heard) return { kind: 'lost', error: heard.cut }
  return mayHaveBeenTaken.has(heard.failed.code)
    ? { kind: 'lost', error: heard.failed }
    : { kind: 'refused', error: heard.failed }
}

/**
 * A message handed to the server's queue was answered (`queue-post`): it is the server's now (or
 * was already, or runs); refused, it is undelivered; with no answer, it is sent once more with
 * the same id where the server dedupes, else undelivered ("may have been sent"). A message the
 * server took is in the record: a read of it is asked.
 */
export function queuePosted(
  state: EngineState,
  queue: QueueState,
  action: Extract<EngineAction, { type: 'queue-posted' }>,
): Step {
  const sending = queue.sending
  if (sending?.via !== 'server-queue' || sending.token !== action.token) return step(state)
  const answer = handOverAnswer(action.heard)
  const commands: Command[] = []
  let next: QueueState = { ...queue, sending: null }
  switch (answer.kind) {
    case 'queued':
      next = change(
        next,
        { op: 'handed', id: sending.id, queueId: answer.queueId },
        { op: 'server-queue', serverQueue: true },
      )
      next = wantServerRead(
        { ...next, handedAt: withId(next.handedAt, answer.queueId, next.serverReads.asked) },
        commands,
      )
      break
    case 'duplicate':
    case 'started':
      // Taken (now, or by an earlier POST whose answer was lost): the reads show where it is.
      next = change(next, { op: 'done', id: sending.id })
      if (answer.kind === 'duplicate') next = wantServerRead(next, commands)
      commands.push(readWanted)
      break
    case 'refused':
      next = change(next, {
        op: 'mark',
        id: sending.id,
        status: 'undelivered',
        error: { code: answer.error.code, message: answer.error.message },
      })
      break
    case 'lost': {
      const attempts = sending.attempts ?? 1
      const item = queue.view.items.find((i) => i.id === sending.id)
      if (queue.view.dedupes === true && attempts < 2 && item) {
        next = { ...next, sending: { ...sending, attempts: attempts + 1 } }
        commands.push({ type: 'queue-post', token: sending.token, id: item.id, text: item.text })
        break
      }
      next = change(next, {
        op: 'mark',
        id: sending.id,
        status: 'undelivered',
        error: answerLost,
      })
    }
  }
  const queued: QueuedState = { ...state, queue: next }
  return { state: queued, commands }
}

const answerLost = errorRecord(
  'network_error',
  'This message was sent, but the connection failed before the server answered, and this ' +
    'server cannot tell a second copy from a new message: it may have been taken. Check the ' +
    'conversation, then send it again (send now) or remove it.' +
    explain('maybe-sent'),
)
