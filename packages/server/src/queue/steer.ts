/**
 * Steering (next-era.md): a queued message reserved for the running turn joins it at the agent's
 * next pause. It is recorded then as a user message of that execution, and `message-steered`
 * goes on the turn's stream and on the message's own POST stream (which then ends).
 */
import type { MessageSteeredEvent } from '@preview-chat/core/contract'
import type { BackendContext } from '../context'
import type { TurnInputs } from '../execution/types'
import type { ThreadKey } from '../store/types'
import { announceQueue, takeQueueStream } from './model'

/** The id the record gives a steered message: `${executionId}:steer:${queueId}`. */
export const steeredMessageId = (executionId: string, queueId: string): string =>
  `${executionId}:steer:${queueId}`

/** At a pause of `executionId`: the items reserved for it join the turn, in queue order. */
export async function letSteersIn(
  context: BackendContext,
  key: ThreadKey,
  executionId: string,
  inputs: TurnInputs,
): Promise<void> {
  const reserved = await context.store.takeSteers(key, executionId)
  if (reserved.length === 0) return
  const createdAt = new Date(context.now()).toISOString()
  for (const item of reserved) {
    await inputs.addInput({
      id: steeredMessageId(executionId, item.id),
      role: 'user',
      content: [{ type: 'text', text: item.message }],
      executionId,
      executionStatus: 'running',
      createdAt,
      ...(item.messageId !== undefined && { messageId: item.messageId }),
    })
    const event: MessageSteeredEvent = {
      type: 'message-steered',
      queueId: item.id,
      executionId,
      message: item.message,
    }
    // Straight onto the streams: the fold of turn events has no place for it.
    context.running.get(executionId)?.stream.send(event)
    const stream = takeQueueStream(context, item.id)
    stream?.send(event)
    stream?.send({ type: 'done', sessionId: key.threadId, executionId })
    stream?.close()
  }
  await announceQueue(context, key)
}
