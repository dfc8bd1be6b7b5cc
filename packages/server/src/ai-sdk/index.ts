import type { ModelMessage } from 'ai'
import type { AgentInput, PreviewChatAgent } from '../agent'
import { approvalOf, modelMessagesOf } from './messages'
import { outcomeOf, pipeFullStream, type AiSdkLogEntry } from './stream'

export type { ApprovalAnswer } from './messages'
export { approvalOf } from './messages'
export type { AiSdkLogEntry } from './stream'

/** What `aiSdkAgent`'s callback is given for one turn. */
export interface AiSdkRunOptions {
  /**
   * The thread so far as the AI SDK's model messages (the person's text; the assistant's text,
   * reasoning, tool calls and results), the person's new message last, or, on a resume, the
   * approval request and the person's answer: pass them to `streamText({ messages })`.
   */
  messages: ModelMessage[]
  /** Fires when the turn is stopped (a Stop from any tab, shutdown, the maximum duration). */
  abortSignal: AbortSignal
  /** The turn's input: a message, or the resume of a suspended tool call. */
  input: AgentInput
}

/** The part of `streamText(...)`'s result the adapter reads. */
export interface AiSdkStreamResult {
  readonly fullStream: AsyncIterable<unknown>
}

export interface AiSdkAgentOptions {
  /**
   * Where the adapter reports what the person is not told: a stream part it did not understand
   * (skipped), the error a model call failed with. Default: `console.warn` / `console.error`.
   */
  log?: (entry: AiSdkLogEntry) => void
}

const consoleLog = (entry: AiSdkLogEntry) =>
  (entry.level === 'error' ? console.error : console.warn)(entry.message, entry.detail)

/**
 * An agent on the AI SDK: `run` calls `streamText(...)` (6.x; written against the stream parts
 * 7.x keeps) and the adapter maps its `fullStream` onto the contract's turn events: text,
 * reasoning, tool input, calls, results and errors, steps. A model error ends the turn as `error`
 * with a message safe to show (the error itself goes to `log`); a Stop aborts `abortSignal`, so
 * the provider's request ends too.
 *
 * Tool approvals: a tool with `needsApproval` suspends the turn (`tool-call-suspended`); `POST
 * …/chat/resume` with `resumeData` `{ "approved": true }` (anything else declines, with an
 * optional `reason`) calls `run` again with the approval answered, and `streamText` runs the tool
 * (or tells the model it was denied) and continues. One approval per step suspends the turn; the
 * step's other requests, if any, are told to the model as not run. `experimental_toolApprovalSecret`
 * is not supported (the record does not keep the approval's signature).
 *
 * `ai` is an optional peer of `@preview-chat/server`: this entry imports only its types.
 *
 * @example
 * const agent = aiSdkAgent(({ messages, abortSignal }) =>
 *   streamText({ model, messages, abortSignal, tools }))
 */
export function aiSdkAgent(
  run: (options: AiSdkRunOptions) => AiSdkStreamResult | PromiseLike<AiSdkStreamResult>,
  options: AiSdkAgentOptions = {},
): PreviewChatAgent {
  const log = options.log ?? consoleLog
  return async (input, context) => {
    const messages = modelMessagesOf(
      context.history,
      input.kind === 'resume'
        ? { payload: input.payload, answer: approvalOf(input.resumeData) }
        : undefined,
    )
    if (input.kind === 'message') messages.push({ role: 'user', content: input.message })
    const abortSignal = context.signal
    let end
    try {
      const result = await run({ messages, abortSignal, input })
      end = await pipeFullStream(result.fullStream, context, log)
    } catch (error) {
      // A Stop: the runner ends the turn as cancelled, whatever the stream threw on its way out.
      abortSignal.throwIfAborted()
      end = { kind: 'error', error } as const
    }
    abortSignal.throwIfAborted()
    if (end.kind === 'error') {
      log({ level: 'error', message: 'The model call failed', detail: end.error })
    }
    return outcomeOf(end, context)
  }
}
