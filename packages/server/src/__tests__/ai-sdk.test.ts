import type { TurnEvent } from '@preview-chat/core/contract'
import { APICallError, jsonSchema, streamText, tool, type ToolSet } from 'ai'
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test'
import { afterEach, describe, expect, it } from 'vitest'
import { aiSdkAgent, type AiSdkLogEntry } from '../ai-sdk'
import {
  chat,
  closeHosts,
  del,
  readHistory,
  resume,
  startHost,
  stopPath,
  turn,
  waitFor,
} from './harness'

/**
 * The AI SDK adapter through a real backend (the Node host on port 0), driven by the AI SDK's own
 * mock model: `streamText` runs as in an app, only the provider's stream is scripted. No network.
 */

afterEach(closeHosts)

// The provider-level types, read off the mock (`@ai-sdk/provider` is not a dependency of ours).
type LanguageModelV3CallOptions = MockLanguageModelV3['doStreamCalls'][number]
type LanguageModelV3StreamPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P>
    ? P
    : never

const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
}
const finish = (unified: 'stop' | 'tool-calls'): LanguageModelV3StreamPart => ({
  type: 'finish',
  usage,
  finishReason: { unified, raw: unified },
})
const text = (id: string, ...deltas: string[]): LanguageModelV3StreamPart[] => [
  { type: 'text-start', id },
  ...deltas.map((delta) => ({ type: 'text-delta' as const, id, delta })),
  { type: 'text-end', id },
]
const reasoning = (id: string, ...deltas: string[]): LanguageModelV3StreamPart[] => [
  { type: 'reasoning-start', id },
  ...deltas.map((delta) => ({ type: 'reasoning-delta' as const, id, delta })),
  { type: 'reasoning-end', id },
]
const toolCall = (toolCallId: string, toolName: string, input: unknown) => {
  const json = JSON.stringify(input)
  return [
    { type: 'tool-input-start', id: toolCallId, toolName },
    { type: 'tool-input-delta', id: toolCallId, delta: json },
    { type: 'tool-input-end', id: toolCallId },
    { type: 'tool-call', toolCallId, toolName, input: json },
  ] satisfies LanguageModelV3StreamPart[]
}
const step = (...parts: LanguageModelV3StreamPart[][]) => ({
  stream: simulateReadableStream<LanguageModelV3StreamPart>({
    chunks: [{ type: 'stream-start', warnings: [] }, ...parts.flat()],
    chunkDelayInMs: null,
  }),
})

/** A mock model that answers its calls with `steps`, in turn (one step per model call). */
function mockModel(...steps: ReturnType<typeof step>[]) {
  return new MockLanguageModelV3({ doStream: steps })
}

/** A backend whose agent is the adapter over `streamText` with `model` and `tools`. */
async function hostWith(model: MockLanguageModelV3, tools?: ToolSet) {
  const logged: AiSdkLogEntry[] = []
  const server = await startHost({
    agent: aiSdkAgent(
      ({ messages, abortSignal }) =>
        streamText({
          model,
          messages,
          abortSignal,
          ...(tools && { tools, stopWhen: () => false }),
          onError: () => undefined,
        }),
      { log: (entry) => logged.push(entry) },
    ),
  })
  return { server, logged }
}

const types = (events: TurnEvent[]) => events.map((event) => event.type)
const deltas = (events: TurnEvent[], type: 'text-delta' | 'reasoning-delta') =>
  events.flatMap((event) => (event.type === type ? [event.delta] : [])).join('')

const weather = {
  description: 'The weather in a city',
  inputSchema: jsonSchema<{ city: string }>({
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
  }),
}

describe('the AI SDK adapter (ai 6.x, its mock model, a real backend)', () => {
  it('streams the model text and reasoning as the contract events, and records them [R-AISDK-TEXT]', async () => {
    const model = mockModel(
      step(reasoning('r1', 'Think', 'ing.'), text('t1', 'Hello', ', ', 'world.'), [finish('stop')]),
    )
    const { server } = await hostWith(model)
    const reader = await turn(chat(server, { message: 'hi' }))
    const started = await reader.until('execution-started')
    const events = await reader.rest()
    expect(types(events)).toEqual([
      'execution-started',
      'start-step',
      'reasoning-start',
      'reasoning-delta',
      'reasoning-delta',
      'reasoning-end',
      'text-start',
      'text-delta',
      'text-delta',
      'text-delta',
      'text-end',
      'finish-step',
      'done',
    ])
    expect(deltas(events, 'reasoning-delta')).toBe('Thinking.')
    expect(deltas(events, 'text-delta')).toBe('Hello, world.')
    const record = await readHistory(server, started.sessionId)
    const answer = record.messages.at(-1)
    expect(answer?.executionStatus).toBe('success')
    expect(answer?.content).toEqual([
      expect.objectContaining({ type: 'reasoning', text: 'Thinking.' }),
      expect.objectContaining({ type: 'text', text: 'Hello, world.' }),
    ])
  })

  it('maps a tool call, its execution and result, and a failing tool as a rejected call [R-AISDK-TOOLS]', async () => {
    const model = mockModel(
      step(toolCall('call-1', 'weather', { city: 'Oslo' }), toolCall('call-2', 'broken', {}), [
        finish('tool-calls'),
      ]),
      step(text('t2', 'It is sunny in Oslo.'), [finish('stop')]),
    )
    const { server } = await hostWith(model, {
      weather: tool({ ...weather, execute: async ({ city }) => ({ city, sky: 'sunny' }) }),
      broken: tool({
        inputSchema: jsonSchema<Record<string, unknown>>({ type: 'object' }),
        execute: async (): Promise<{ sky: string }> => {
          throw new Error('The weather station is offline.')
        },
      }),
    })
    const reader = await turn(chat(server, { message: 'weather in Oslo?' }))
    const started = await reader.until('execution-started')
    const events = await reader.rest()
    const call1 = events.filter((event) => 'toolCallId' in event && event.toolCallId === 'call-1')
    expect(types(call1)).toEqual([
      'tool-input-start',
      'tool-input-delta',
      'tool-call',
      'tool-execution-start',
      'tool-execution-end',
      'tool-result',
    ])
    expect(call1.at(2)).toMatchObject({ toolName: 'weather', input: { city: 'Oslo' } })
    expect(call1.at(-1)).toMatchObject({ output: { city: 'Oslo', sky: 'sunny' } })
    const call2 = events.filter((event) => 'toolCallId' in event && event.toolCallId === 'call-2')
    expect(call2.at(-2)).toMatchObject({ type: 'tool-execution-end', isError: true })
    expect(call2.at(-1)).toMatchObject({
      type: 'tool-result',
      isError: true,
      output: 'The weather station is offline.',
    })
    expect(deltas(events, 'text-delta')).toBe('It is sunny in Oslo.')
    expect(types(events).filter((type) => type === 'start-step')).toHaveLength(2)

    const record = await readHistory(server, started.sessionId)
    expect(record.messages.at(-1)?.content).toEqual([
      expect.objectContaining({ type: 'tool-call', toolCallId: 'call-1', state: 'resolved' }),
      expect.objectContaining({ type: 'tool-call', toolCallId: 'call-2', state: 'rejected' }),
      expect.objectContaining({ type: 'text', text: 'It is sunny in Oslo.' }),
    ])
  })

  it('gives the model the thread so far on the next turn: text, tool calls and results [R-AISDK-HISTORY]', async () => {
    const model = mockModel(
      step(toolCall('call-1', 'weather', { city: 'Oslo' }), [finish('tool-calls')]),
      step(text('t1', 'Sunny.'), [finish('stop')]),
      step(text('t2', 'Still sunny.'), [finish('stop')]),
    )
    const { server } = await hostWith(model, {
      weather: tool({ ...weather, execute: async () => ({ sky: 'sunny' }) }),
    })
    const first = await turn(chat(server, { message: 'weather?' }))
    const started = await first.until('execution-started')
    await first.rest()
    await (await turn(chat(server, { message: 'and now?', sessionId: started.sessionId }))).rest()

    expect(model.doStreamCalls).toHaveLength(3)
    const prompt = model.doStreamCalls[2]?.prompt
    expect(prompt).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
      {
        role: 'assistant',
        content: [
          expect.objectContaining({
            type: 'tool-call',
            toolCallId: 'call-1',
            toolName: 'weather',
            input: { city: 'Oslo' },
          }),
        ],
      },
      {
        role: 'tool',
        content: [
          expect.objectContaining({
            type: 'tool-result',
            toolCallId: 'call-1',
            output: { type: 'json', value: { sky: 'sunny' } },
          }),
        ],
      },
      { role: 'assistant', content: [expect.objectContaining({ type: 'text', text: 'Sunny.' })] },
      { role: 'user', content: [{ type: 'text', text: 'and now?' }] },
    ])
  })

  it('ends the turn as an error the person may see when the model call fails: no provider detail, no stack [R-AISDK-MODEL-ERROR]', async () => {
    const secret = 'sk-live-0123456789'
    const model = new MockLanguageModelV3({
      doStream: async () => {
        throw new APICallError({
          message: `Incorrect API key provided: ${secret}`,
          url: 'https://internal.example/v1/chat/completions',
          requestBodyValues: {},
          statusCode: 401,
          responseBody: `{"error":"bad key ${secret}"}`,
          isRetryable: false,
        })
      },
    })
    const { server, logged } = await hostWith(model)
    const reader = await turn(chat(server, { message: 'hi' }))
    const started = await reader.until('execution-started')
    const events = await reader.rest()
    const error = events.at(-1)
    expect(error).toMatchObject({ type: 'error', errorCode: 'model_http_error' })
    const shown = JSON.stringify(events)
    expect(shown).toContain('HTTP 401')
    for (const leak of [secret, 'internal.example', 'at ', 'APICallError']) {
      expect(shown).not.toContain(leak)
    }
    const record = await readHistory(server, started.sessionId)
    expect(record.messages.at(-1)).toMatchObject({ executionStatus: 'error' })
    expect(JSON.stringify(record)).not.toContain(secret)
    // The app's log gets the error itself.
    expect(logged).toEqual([
      expect.objectContaining({ level: 'error', detail: expect.any(APICallError) }),
    ])
  })

  it('passes a Stop to the model call: its abortSignal fires and the turn ends cancelled [R-AISDK-ABORT]', async () => {
    const calls: LanguageModelV3CallOptions[] = []
    const model = new MockLanguageModelV3({
      doStream: async (options) => {
        calls.push(options)
        // A provider stream that goes on until its request is aborted.
        const stream = new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const part of [
              { type: 'stream-start', warnings: [] },
              ...text('t1', 'Once upon'),
            ]) {
              if (part.type !== 'text-end') controller.enqueue(part as LanguageModelV3StreamPart)
            }
            options.abortSignal?.addEventListener('abort', () =>
              controller.error(options.abortSignal?.reason),
            )
          },
        })
        return { stream }
      },
    })
    const { server } = await hostWith(model)
    const reader = await turn(chat(server, { message: 'a long story' }))
    const started = await reader.until('execution-started')
    await reader.until('text-delta')
    expect(calls[0]?.abortSignal?.aborted).toBe(false)

    const stop = await del(server, stopPath(started.sessionId, started.executionId))
    expect(stop.status).toBe(200)
    await waitFor(() => calls[0]?.abortSignal?.aborted, 'the model call to see the abort')
    await reader.rest()
    const record = await readHistory(server, started.sessionId)
    expect(record.messages.at(-1)).toMatchObject({ executionStatus: 'cancelled' })
    expect(record.messages.at(-1)?.content).toEqual([
      expect.objectContaining({ type: 'text', text: 'Once upon' }),
    ])
  })

  it('suspends on a tool that needs approval, and runs it when resumed with approved: true [R-AISDK-APPROVAL]', async () => {
    const sent: unknown[] = []
    const model = mockModel(
      step(
        text('t1', 'I will send it.'),
        toolCall('call-1', 'send_email', { to: 'team@example.com' }),
        [finish('tool-calls')],
      ),
      step(text('t2', 'Sent.'), [finish('stop')]),
      step(text('t3', 'You are welcome.'), [finish('stop')]),
    )
    const { server } = await hostWith(model, {
      send_email: tool({
        inputSchema: jsonSchema<{ to: string }>({
          type: 'object',
          properties: { to: { type: 'string' } },
          required: ['to'],
        }),
        needsApproval: true,
        execute: async (input) => {
          sent.push(input)
          return { sent: true }
        },
      }),
    })
    const first = await turn(chat(server, { message: 'email the team' }))
    const started = await first.until('execution-started')
    const suspended = await first.until('tool-call-suspended')
    expect(suspended.payload).toMatchObject({
      toolCallId: 'call-1',
      toolName: 'send_email',
      input: { to: 'team@example.com' },
    })
    await first.rest()
    expect(sent).toEqual([])
    expect(model.doStreamCalls).toHaveLength(1)

    const { runId, toolCallId } = suspended.payload
    const second = await turn(resume(server, { runId, toolCallId, resumeData: { approved: true } }))
    const events = await second.rest()
    expect(sent).toEqual([{ to: 'team@example.com' }])
    expect(events.find((event) => event.type === 'tool-result')).toMatchObject({
      toolCallId: 'call-1',
      output: { sent: true },
    })
    expect(deltas(events, 'text-delta')).toBe('Sent.')
    // The model's second call is told the tool's result.
    expect(model.doStreamCalls[1]?.prompt.at(-1)).toEqual({
      role: 'tool',
      content: [
        expect.objectContaining({
          type: 'tool-result',
          toolCallId: 'call-1',
          output: { type: 'json', value: { sent: true } },
        }),
      ],
    })
    const record = await readHistory(server, started.sessionId)
    expect(record.messages.at(-1)).toMatchObject({ executionStatus: 'success' })

    // The next turn tells the model of the call once (the record has it twice: suspended, then
    // resumed), with its result.
    await (await turn(chat(server, { message: 'thanks', sessionId: started.sessionId }))).rest()
    expect(model.doStreamCalls[2]?.prompt.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          expect.objectContaining({ type: 'text', text: 'I will send it.' }),
          expect.objectContaining({ type: 'tool-call', toolCallId: 'call-1' }),
        ],
      },
      {
        role: 'tool',
        content: [
          expect.objectContaining({
            toolCallId: 'call-1',
            output: { type: 'json', value: { sent: true } },
          }),
        ],
      },
      { role: 'assistant', content: [expect.objectContaining({ type: 'text', text: 'Sent.' })] },
      { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
    ])
  })

  it('declines a tool when resumed with anything but approved: true, and the model is told so [R-AISDK-APPROVAL]', async () => {
    const model = mockModel(
      step(toolCall('call-1', 'send_email', { to: 'x@example.com' }), [finish('tool-calls')]),
      step(text('t2', 'Not sent.'), [finish('stop')]),
    )
    let ran = false
    const { server } = await hostWith(model, {
      send_email: tool({
        inputSchema: jsonSchema<{ to: string }>({ type: 'object' }),
        needsApproval: true,
        execute: async () => {
          ran = true
          return { sent: true }
        },
      }),
    })
    const first = await turn(chat(server, { message: 'email x' }))
    const suspended = await first.until('tool-call-suspended')
    await first.rest()
    const { runId, toolCallId } = suspended.payload
    const events = await (
      await turn(
        resume(server, { runId, toolCallId, resumeData: { approved: false, reason: 'no' } }),
      )
    ).rest()
    expect(ran).toBe(false)
    expect(events.find((event) => event.type === 'tool-result')).toMatchObject({ isError: true })
    expect(model.doStreamCalls[1]?.prompt.at(-1)).toEqual({
      role: 'tool',
      content: [
        expect.objectContaining({
          toolCallId: 'call-1',
          output: expect.objectContaining({ type: 'execution-denied' }),
        }),
      ],
    })
    expect(deltas(events, 'text-delta')).toBe('Not sent.')
  })

  it('ignores and logs a stream part it does not know, and one missing its fields [R-AISDK-PARSE]', async () => {
    const logged: AiSdkLogEntry[] = []
    async function* fullStream() {
      yield { type: 'start-step', request: {}, warnings: [] }
      yield { type: 'hologram', payload: 1 }
      yield { type: 'text-start', id: 'a' }
      yield { type: 'text-delta', id: 'a', text: 42 }
      yield null
      yield { type: 'text-delta', id: 'a', text: 'ok' }
      yield { type: 'text-end', id: 'a' }
      yield { type: 'finish-step' }
    }
    const server = await startHost({
      agent: aiSdkAgent(() => ({ fullStream: fullStream() }), {
        log: (entry) => logged.push(entry),
      }),
    })
    const events = await (await turn(chat(server, { message: 'hi' }))).rest()
    expect(deltas(events, 'text-delta')).toBe('ok')
    expect(events.at(-1)?.type).toBe('done')
    expect(logged.map((entry) => entry.detail)).toEqual([
      { type: 'hologram', payload: 1 },
      { type: 'text-delta', id: 'a', text: 42 },
      null,
    ])
  })
})
