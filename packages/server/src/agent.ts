import type { Message, SuspendedPayload, TurnEvent } from '@preview-chat/core/contract'

/** What the agent is asked to do: answer a message, or continue a suspended tool call. */
export type AgentInput =
  | { kind: 'message'; message: string }
  | { kind: 'resume'; payload: SuspendedPayload; resumeData: unknown }

/** How a turn ended; the execution runner records it and writes the terminal event. */
export type AgentOutcome =
  | { kind: 'done' }
  | { kind: 'suspended'; payload: SuspendedPayload }
  | { kind: 'error'; message: string; errorCode: string }

export interface AgentContext {
  /** Streams one event to the live stream and folds it into the recorded transcript. */
  emit(event: TurnEvent): void
  /** The pause between deltas; rejects when the execution is cancelled. */
  pause(): Promise<void>
  /** A fresh id, e.g. for a text stream or a tool call. */
  id(prefix: string): string
  now(): number
  /**
   * Fires when the turn is stopped (a Stop from any tab, the backend closing, its maximum duration):
   * pass it to the model call (`streamText({ abortSignal })`, `fetch`) so the provider's request
   * ends too. `pause()` and `emit()` throw once it has fired.
   */
  readonly signal: AbortSignal
  /**
   * The thread's recorded messages before this turn, oldest first (a deep copy): what the agent
   * builds the model's context from. Each has `role` and `content` parts as a history read returns
   * them.
   */
  readonly history: readonly Message[]
}

/** An agent: emits a turn's events through `context` and says how the turn ended. */
export type PreviewChatAgent = (input: AgentInput, context: AgentContext) => Promise<AgentOutcome>

/**
 * The scripted agent of the reference server: deterministic, and makes every part of the stream
 * happen. Commands (the message's first word):
 *
 * - any ordinary message: a reasoning block, a `word_count` tool call with its result, then text
 *   that quotes the message, word by word (its first 100,000 words, then an ellipsis);
 * - `/long N`: N text deltas (default 20);
 * - `/words N`: the text `word1 word2 … wordN` (default 50), one delta per word: what the mock
 *   model behind `fixtures/n8n-2.41/` streamed, so a turn can be compared with those captures;
 * - `/delegate N`: a `delegate` tool call whose child agent streams N characters (default 5,000),
 *   half reasoning then half text, through `subagent-chunk`, to exercise the 4,000 budget;
 * - `/suspend`: a `request_approval` tool call that suspends for a person; resume it with
 *   resumeData `{ "approved": true }` (or anything else to decline); `{ "approved": true,
 *   "long": N }` approves and then streams N more text deltas, as `/long N` does (a resumed turn
 *   that lasts, for the conformance suite's R-TURN-SURVIVES-RESUME);
 * - `/fail`: some text, then an in-band error (`executionStatus: "error"`).
 */
export const scriptedAgent: PreviewChatAgent = async (input, context) => {
  if (input.kind === 'resume') return resume(input.payload, input.resumeData, context)
  const [command, argument] = input.message.trim().split(/\s+/)
  switch (command) {
    case '/long':
      return textDeltas(
        numbered(count(argument, 20), (n) => `delta ${n}. `),
        context,
      )
    case '/words':
      return textDeltas(
        numbered(count(argument, 50), (n, last) => (last ? `word${n}` : `word${n} `)),
        context,
      )
    case '/delegate':
      return delegate(count(argument, 5000), context)
    case '/suspend':
      return suspend(context)
    case '/fail':
      return fail(context)
    default:
      return answer(input.message, context)
  }
}

/**
 * Upper bound of N, so that `/long 1e9` cannot hold the server for days; also of the words an
 * ordinary message's answer quotes (one delta each).
 */
export const maxCount = 100_000

function count(argument: string | undefined, fallback: number): number {
  const value = argument === undefined ? fallback : Number.parseInt(argument, 10)
  return Number.isFinite(value) && value >= 0 ? Math.min(value, maxCount) : fallback
}

/** Splits text into words that keep their trailing space, so that the deltas rebuild it. */
function words(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? [text]
}

/** One text or reasoning stream: start, a delta per word (after a pause each), end. */
async function streamWords(
  context: AgentContext,
  kind: 'text' | 'reasoning',
  text: string,
): Promise<void> {
  const id = context.id(kind)
  context.emit({ type: `${kind}-start`, id })
  for (const word of words(text)) {
    await context.pause()
    context.emit({ type: `${kind}-delta`, id, delta: word })
  }
  context.emit({ type: `${kind}-end`, id })
}

const streamText = (context: AgentContext, text: string) => streamWords(context, 'text', text)
const streamReasoning = (context: AgentContext, text: string) =>
  streamWords(context, 'reasoning', text)

/** A tool call that runs to its result. */
async function callTool(
  context: AgentContext,
  toolName: string,
  input: unknown,
  run: (toolCallId: string) => Promise<unknown>,
): Promise<void> {
  const toolCallId = context.id('call')
  context.emit({ type: 'tool-input-start', toolCallId, toolName })
  await context.pause()
  context.emit({ type: 'tool-input-delta', toolCallId, delta: JSON.stringify(input) })
  context.emit({ type: 'tool-call', toolCallId, toolName, input })
  context.emit({ type: 'tool-execution-start', toolCallId, toolName, startTime: context.now() })
  const output = await run(toolCallId)
  context.emit({
    type: 'tool-execution-end',
    toolCallId,
    toolName,
    isError: false,
    endTime: context.now(),
  })
  context.emit({ type: 'tool-result', toolCallId, toolName, output })
}

/** The message, or its first `maxCount` words and an ellipsis: a 1 MiB message is no day's turn. */
function quoted(message: string): string {
  const all = words(message)
  if (all.length <= maxCount) return message
  return `${all.slice(0, maxCount).join('').trimEnd()} … (the first ${maxCount} words)`
}

async function answer(message: string, context: AgentContext): Promise<AgentOutcome> {
  const wordCount = message.trim().split(/\s+/).length
  context.emit({ type: 'start-step' })
  await streamReasoning(context, 'The person wrote a message. I count its words, then quote it.')
  await callTool(context, 'word_count', { text: message }, async () => {
    await context.pause()
    return { words: wordCount }
  })
  context.emit({ type: 'finish-step' })
  context.emit({ type: 'start-step' })
  const counted = wordCount === 1 ? '1 word' : `${wordCount} words`
  await streamText(context, `You said (${counted}): "${quoted(message)}"`)
  context.emit({ type: 'finish-step' })
  return { kind: 'done' }
}

/**
 * `count` texts, numbered from 1, made as they are streamed: a list made up front held every
 * delta of a turn from its start (`/long 100000`: some 3.5 MB a turn, whatever was streamed yet).
 */
function* numbered(count: number, text: (n: number, last: boolean) => string): Iterable<string> {
  for (let n = 1; n <= count; n++) yield text(n, n === count)
}

/** One step of one text stream: a delta per text, after a pause each. */
async function textDeltas(deltas: Iterable<string>, context: AgentContext): Promise<AgentOutcome> {
  context.emit({ type: 'start-step' })
  const id = context.id('text')
  context.emit({ type: 'text-start', id })
  for (const delta of deltas) {
    await context.pause()
    context.emit({ type: 'text-delta', id, delta })
  }
  context.emit({ type: 'text-end', id })
  context.emit({ type: 'finish-step' })
  return { kind: 'done' }
}

/** Characters per child delta. */
const childChunk = 100

async function delegate(chars: number, context: AgentContext): Promise<AgentOutcome> {
  const reasoningChars = Math.floor(chars / 2)
  context.emit({ type: 'start-step' })
  await callTool(context, 'delegate', { task: 'research', chars }, async (parentToolCallId) => {
    const chunk = (payload: Parameters<typeof childEvent>[1]) =>
      context.emit(childEvent(parentToolCallId, payload))
    chunk({ type: 'reasoning-start' })
    for (const piece of pieces('r', reasoningChars)) {
      await context.pause()
      chunk({ type: 'reasoning-delta', delta: piece })
    }
    chunk({ type: 'reasoning-end' })
    const childCall = context.id('child-call')
    chunk({ type: 'tool-input-start', toolCallId: childCall, toolName: 'search' })
    chunk({
      type: 'tool-execution-start',
      toolCallId: childCall,
      toolName: 'search',
      startTime: context.now(),
    })
    await context.pause()
    chunk({
      type: 'tool-execution-end',
      toolCallId: childCall,
      toolName: 'search',
      isError: false,
      endTime: context.now(),
    })
    for (const piece of pieces('t', chars - reasoningChars)) {
      await context.pause()
      chunk({ type: 'text-delta', delta: piece })
    }
    return { summary: `The child agent wrote ${chars} characters.` }
  })
  context.emit({ type: 'finish-step' })
  context.emit({ type: 'start-step' })
  await streamText(context, 'The delegated task is done.')
  context.emit({ type: 'finish-step' })
  return { kind: 'done' }
}

function childEvent(
  parentToolCallId: string,
  chunk: Extract<TurnEvent, { type: 'subagent-chunk' }>['chunk'],
): TurnEvent {
  return { type: 'subagent-chunk', parentToolCallId, taskPath: 'delegate/research', chunk }
}

/** `total` characters of `letter`, in pieces of `childChunk`. */
function pieces(letter: string, total: number): string[] {
  const result: string[] = []
  for (let done = 0; done < total; done += childChunk) {
    result.push(letter.repeat(Math.min(childChunk, total - done)))
  }
  return result
}

async function suspend(context: AgentContext): Promise<AgentOutcome> {
  context.emit({ type: 'start-step' })
  await streamText(context, 'I need your approval before I send the email.')
  const toolCallId = context.id('call')
  const toolName = 'request_approval'
  const input = { action: 'send_email', to: 'team@example.com' }
  context.emit({ type: 'tool-input-start', toolCallId, toolName })
  await context.pause()
  context.emit({ type: 'tool-input-delta', toolCallId, delta: JSON.stringify(input) })
  context.emit({ type: 'tool-call', toolCallId, toolName, input })
  context.emit({ type: 'finish-step' })
  return { kind: 'suspended', payload: { toolCallId, runId: context.id('run'), toolName, input } }
}

async function resume(
  payload: SuspendedPayload,
  resumeData: unknown,
  context: AgentContext,
): Promise<AgentOutcome> {
  const approved =
    typeof resumeData === 'object' &&
    resumeData !== null &&
    (resumeData as { approved?: unknown }).approved === true
  const { toolCallId, toolName } = payload
  context.emit({ type: 'start-step' })
  context.emit({ type: 'tool-execution-start', toolCallId, toolName, startTime: context.now() })
  await context.pause()
  context.emit({
    type: 'tool-execution-end',
    toolCallId,
    toolName,
    isError: !approved,
    endTime: context.now(),
  })
  context.emit(
    approved
      ? { type: 'tool-result', toolCallId, toolName, output: { approved: true, sent: true } }
      : {
          type: 'tool-result',
          toolCallId,
          toolName,
          output: 'The person declined.',
          isError: true,
        },
  )
  context.emit({ type: 'finish-step' })
  context.emit({ type: 'start-step' })
  await streamText(
    context,
    approved ? 'Approved: the email was sent.' : 'Understood: I did not send the email.',
  )
  context.emit({ type: 'finish-step' })
  const long = approved ? (resumeData as { long?: unknown }).long : undefined
  if (typeof long === 'number' && Number.isInteger(long) && long > 0)
    return textDeltas(
      numbered(Math.min(long, maxCount), (n) => `delta ${n}. `),
      context,
    )
  return { kind: 'done' }
}

async function fail(context: AgentContext): Promise<AgentOutcome> {
  context.emit({ type: 'start-step' })
  await streamText(context, 'Let me try that.')
  context.emit({ type: 'finish-step' })
  return {
    kind: 'error',
    message: 'The scripted agent failed on purpose (/fail). Send another message to continue.',
    errorCode: 'agent_failed',
  }
}
