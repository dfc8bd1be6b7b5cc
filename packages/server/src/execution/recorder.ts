import { recordedMessageId, type Message, type TurnEvent } from '@preview-chat/core/contract'
import {
  applyTurnEvent,
  recordedParts,
  startTurn,
  type LiveTurn,
  type TurnOptions,
} from '@preview-chat/core/internal'
import type { SseStream } from '../sse'
import type { ExecutionEnd, ExecutionRecord } from '../store/types'
import { announceExecution } from '../threads'
import { retryWhileUnavailable } from '../unavailable'
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
  /** Records the timeline and announces it to the owner's tabs (after any earlier recording). */
  record(): Promise<void>
  /** Records when the timeline changed since the last recording, or none was made yet. */
  recordIfChanged(): void
  /**
   * Records the end, after every recording asked before it (`endExecution` with the turn's
   * messages), and announces it. Resolves to the ended record (undefined if it had ended).
   */
  end(end: Omit<ExecutionEnd, 'messages'>): Promise<ExecutionRecord | undefined>
  /** Announces the turn again, without recording (a flavor's extra end announcement). */
  announce(): Promise<void>
  /** Records a person's message that joined the running turn (a steer), and announces it. */
  addInput(message: Message): Promise<void>
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
  const announce = () => announceExecution(settings, thread, executionId)
  const writes = createWriteQueue((error) =>
    settings.onFailure('snapshot_write_failed', execution, error),
  )

  // One recording: the latest retained timeline replaces the assistant message's parts, and every
  // tab of the owner hears of it ("It follows later agentExecutionUpdated notifications"). The
  // turn's messages join the thread's record with its first recording. Recordings are written one
  // after another; one asked while another waits to be written is that one (the latest timeline).
  let recorded = false
  const record = () => {
    recorded = true
    return writes.latest(async () => {
      recordedContent = turn.assistant.content
      assistant.content = recordedParts(recordedContent)
      await settings.store.recordMessages(executionId, structuredClone(messages))
      settings.onRecorded(executionId, execution.status)
      await announce()
    })
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
      if (!recorded || turn.assistant.content !== recordedContent) void record()
    },
    end: (end) =>
      writes.then(async () => {
        assistant.content = recordedParts(turn.assistant.content)
        // The end reaches the record even across a store restart ("no turn left running").
        const ended = await retryWhileUnavailable(
          () => settings.store.endExecution({ ...end, messages: structuredClone(messages) }),
          settings.timers,
        )
        settings.onRecorded(executionId, end.status)
        await announce()
        return ended
      }),
    announce,
    async addInput(message) {
      messages.push(message)
      if (recorded) {
        await writes.then(() =>
          settings.store.recordMessages(executionId, [structuredClone(message)]),
        )
      }
      await announce()
    },
  }
}

/** Store writes of one turn, one after another, in the order asked. */
interface WriteQueue {
  /** Runs `write` after the writes asked before; its failure is reported, and rejects. */
  then<T>(write: () => Promise<T>): Promise<T>
  /** As `then`, but one write waiting to start already stands for this one (it reads the latest). */
  latest(write: () => Promise<void>): Promise<void>
}

function createWriteQueue(onFailure: (error: unknown) => void): WriteQueue {
  let tail: Promise<unknown> = Promise.resolve()
  let waiting: Promise<void> | undefined
  const then = <T>(write: () => Promise<T>): Promise<T> => {
    const next = tail.then(write, write)
    tail = next.catch(onFailure)
    return next
  }
  return {
    then,
    latest(write) {
      if (waiting) return waiting
      const next = then(() => {
        waiting = undefined
        return write()
      })
      waiting = next.catch(() => undefined)
      return waiting
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
