import type { Message, ToolCallPart } from '@preview-chat/core'

/** Where a tool call stands, for a renderer (see `toolCallStatus`). */
export type ToolCallStatus =
  'writing' | 'running' | 'waiting' | 'resolved' | 'rejected' | 'answered' | 'ended'

/**
 * Where the tool call `part` of `message` stands. A call has no `state` while it runs, and also
 * once its turn is over without an output: a suspension that was answered keeps neither `state`
 * nor `suspendPayload` in its message (the turn went on as a new execution, whose message holds
 * the same call resolved), and a turn stopped, failed or interrupted mid-call leaves it so. Only
 * the message's `executionStatus` tells these apart, so a renderer that reads `state` alone
 * shows a finished turn's call running for ever.
 *
 * - `waiting`: it waits for a person (`suspendPayload`; answer it through `chat.resume`);
 * - `resolved` / `rejected`: its `output` / `error` is recorded;
 * - `writing` / `running`: its turn runs, the model still writes its input / it runs;
 * - `answered`: a suspension answered (its turn ended in `success`), its result in a later message;
 * - `ended`: its turn ended (`cancelled`, `error`, `interrupted`) before it had a result.
 */
export function toolCallStatus(
  part: ToolCallPart,
  message: Pick<Message, 'executionStatus'>,
): ToolCallStatus {
  if (part.state === 'resolved') return 'resolved'
  if (part.state === 'rejected' || part.error !== undefined) return 'rejected'
  if (part.suspendPayload !== undefined) return 'waiting'
  if (message.executionStatus === 'running') return part.input === undefined ? 'writing' : 'running'
  return message.executionStatus === 'success' ? 'answered' : 'ended'
}
