import { recordedMessageId, type Message, type TurnEvent } from '@preview-chat/core/contract'
import {
  applyTurnEvent,
  recordedParts,
  startTurn,
  type LiveTurn,
  type TurnOptions,
} from '@preview-chat/core/internal'
import type { SseStream } from '../sse'
import type { ExecutionRecord } from '../store'
import { executionUpdated } from '../threads'
import type { ExecutionSettings, StartExecution } from './types'

/**
 * The record of one turn: its messages in the thread, the fold of its events, and the push that
 * announces each recording. The recorder is the client's fold of the same events ("one fold"):
 * live and recorded views of a turn cannot disagree.
 */
export interface TurnRecorder {
  /** The turn as folded so far (not necessarily recorded yet). */
  readonly turn: LiveTurn
  /** The turn's messages (a message turn's user message, then the assistant's). */
  readonly messages: readonly Message[]
  /** Folds one event into the timeline and sends it to whoever reads the live stream. */
  send(event: TurnEvent): void
  /** Folds one event without sending it (a terminal event, which the ending sends itself). */
  fold(event: TurnEvent): void
  /** Records the timeline and announces it to the owner's tabs. */
  record(): void
  /** Records when the timeline changed since the last recording, or none was made yet. */
  recordIfChanged(): void
  /** Announces the turn again, without recording (a flavor's extra end announcement). */
  announce(): void
  /** Records a person's message that joined the running turn (a steer), and announces it. */
  addInput(message: Message): void
}

export function createTurnRecorder(
  settings: ExecutionSettings,
  start: StartExecution,
  execution: ExecutionRecord,
  stream: SseStream,
): TurnRecorder {
  const { thread } = start
  const executionId = execution.id
  const createdAt = execution.startedAt
  const { messages, assistant } = turnMessages(start, executionId, createdAt)
  // A resume completes the tool call of the execution it resumes.
  const options: TurnOptions = {
    delegationCharLimit: settings.delegationCharLimit,
    now: settings.now,
  }
  let turn: LiveTurn = startTurn({
    executionId,
    sessionId: thread.id,
    createdAt,
    ...(start.resumes && {
      resumes: {
        toolCallId: start.resumes.toolCallId,
        toolName: start.resumes.toolName,
        input: start.resumes.input,
      },
    }),
  })
  let recordedContent = turn.assistant.content
  const announce = () =>
    settings.store.push.publish(thread.ownerId, executionUpdated(thread, executionId))

  // One recording: the latest retained timeline replaces the assistant message's parts, and every
  // tab of the owner hears of it ("It follows later agentExecutionUpdated notifications"). The
  // turn's messages join the thread's record with its first recording.
  let recorded = false
  const record = () => {
    if (!recorded) thread.messages.push(...messages)
    recorded = true
    recordedContent = turn.assistant.content
    assistant.content = recordedParts(recordedContent)
    settings.onRecorded(executionId, execution.status)
    announce()
  }
  const fold = (event: TurnEvent) => {
    turn = applyTurnEvent(turn, event, options)
  }

  return {
    get turn() {
      return turn
    },
    messages,
    send(event) {
      fold(event)
      stream.send(event)
    },
    fold,
    record,
    recordIfChanged() {
      if (!recorded || turn.assistant.content !== recordedContent) record()
    },
    announce,
    addInput(message) {
      messages.push(message)
      if (recorded) thread.messages.push(message)
      announce()
    },
  }
}

/** A message turn records the person's text and the assistant's answer; a resume the answer only. */
function turnMessages(
  start: StartExecution,
  executionId: string,
  createdAt: string,
): { messages: Message[]; assistant: Message } {
  const running = { executionId, executionStatus: 'running', createdAt } as const
  const assistant: Message = {
    id: recordedMessageId(executionId, 'assistant'),
    role: 'assistant',
    content: [],
    ...running,
  }
  if (start.userText === undefined) return { messages: [assistant], assistant }
  const user: Message = {
    id: recordedMessageId(executionId, 'user'),
    role: 'user',
    content: [{ type: 'text', text: start.userText }],
    ...running,
    ...(start.messageId !== undefined && { messageId: start.messageId }),
  }
  return { messages: [user, assistant], assistant }
}
