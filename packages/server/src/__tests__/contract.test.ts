import {
  recordedMessageId,
  type Message,
  type ToolCallPart,
  type TurnEvent,
} from '@preview-chat/core/contract'
import {
  applyTurnEvents,
  DEFAULT_DELEGATION_CHAR_LIMIT,
  startTurn,
} from '@preview-chat/core/internal'
import { afterEach, describe, expect, it } from 'vitest'
import { createPreviewChatBackend } from '../backend'
import { createMemoryBus } from '../bus/memory'
import type { PreviewChatBus } from '../bus/types'
import { createMemoryStore } from '../store/memory'
import {
  chat,
  chatPath,
  closeHosts,
  createGate,
  del,
  openPushSocket,
  post,
  readHistory,
  resume,
  sendRawAndClose,
  startHost,
  stopPath,
  suspendedWithSecondHost,
  turn,
  waitFor,
  collectUnhandled,
} from './harness'
import { describePrivacy } from './privacy.suite'

// "Bad input never crashes it": any unhandled error anywhere in this file fails the last test.
const unhandled = collectUnhandled()
afterEach(closeHosts)

// A lookup: the ids themselves are pinned literally by the R-WIRE-MESSAGE-IDS tests below.
const assistantOf = (messages: Message[], executionId: string) =>
  messages.find((message) => message.id === recordedMessageId(executionId, 'assistant'))

const toolCalls = (message: Message | undefined) =>
  (message?.content ?? []).filter((part): part is ToolCallPart => part.type === 'tool-call')

describe('1. a new message creates the thread and starts with execution-started [R-WIRE-ENDPOINTS R-WIRE-STARTED R-WIRE-SSE-FRAMING R-WIRE-MESSAGE-IDS]', () => {
  it('records the execution before announcing it, so a read right after shows it active before any output [R-SERVER-ACTIVE-EARLY R-SERVER-END-RECORDED]', async () => {
    const gate = createGate()
    const server = await startHost({ sleep: gate.sleep, snapshotMs: 60_000 })
    const reader = await turn(
      chat(server, { message: 'hello world', sessionId: 't1', newSession: true }),
    )

    const first = await reader.next()
    expect(first).toEqual({
      type: 'execution-started',
      executionId: expect.any(String),
      sessionId: 't1',
    })
    const { executionId } = first as Extract<TurnEvent, { type: 'execution-started' }>
    expect(reader.comments[0]).toBe(':ok')
    expect(reader.response.headers.get('content-type')).toBe('text/event-stream; charset=UTF-8')
    expect(reader.response.headers.get('cache-control')).toBe('no-cache, no-transform')
    expect(reader.response.headers.get('x-accel-buffering')).toBe('no')

    const during = await readHistory(server, 't1')
    expect(during.activeExecutionId).toBe(executionId)
    expect(during.messages).toEqual([
      {
        id: `${executionId}:user`,
        role: 'user',
        content: [{ type: 'text', text: 'hello world' }],
        executionId,
        executionStatus: 'running',
        createdAt: expect.any(String),
      },
      {
        id: `${executionId}:assistant`,
        role: 'assistant',
        content: [],
        executionId,
        executionStatus: 'running',
        createdAt: expect.any(String),
      },
    ])
    // The cancellation handle is registered too: it is recorded as running on this main.
    expect(server.backend.inspect.running()).toEqual([executionId])

    gate.open()
    const events = await reader.rest()
    expect(events.at(-1)).toEqual({ type: 'done', sessionId: 't1', executionId })
    const after = await readHistory(server, 't1')
    expect(after.activeExecutionId).toBeNull()
    expect(assistantOf(after.messages, executionId)?.executionStatus).toBe('success')
  })
  it('sends the :ping comment while the turn stream is idle [R-WIRE-SSE-FRAMING]', async () => {
    const gate = createGate()
    const server = await startHost({ sleep: gate.sleep, pingMs: 5 })
    const response = await chat(server, { message: 'idle', sessionId: 't1p', newSession: true })
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    let text = ''
    while (!text.includes(':ping\n\n')) {
      const { value, done } = await reader.read()
      if (done) break
      text += new TextDecoder().decode(value)
    }
    expect(text.startsWith(':ok\n\n')).toBe(true)
    expect(text).toContain(':ping\n\n')
    gate.open()
    await reader.cancel()
  })
})

describe('2. closing the connection after execution-started does not stop the turn [R-TURN-SURVIVES]', () => {
  it('finishes a message turn whose client left, and records the whole transcript', async () => {
    const gate = createGate()
    const server = await startHost({ sleep: gate.sleep })
    const client = new AbortController()
    const reader = await turn(
      chat(
        server,
        { message: 'keep going', sessionId: 't2', newSession: true },
        'alice',
        client.signal,
      ),
    )
    const { executionId } = await reader.until('execution-started')
    client.abort()
    await waitFor(
      () => !server.backend.inspect.hasListener(executionId),
      'the server to see the client leave',
    )
    expect(server.backend.inspect.running()).toEqual([executionId])

    gate.open()
    await waitFor(
      async () => (await readHistory(server, 't2')).activeExecutionId === null,
      'the turn to end',
    )
    const history = await readHistory(server, 't2')
    const assistant = assistantOf(history.messages, executionId)
    expect(assistant?.executionStatus).toBe('success')
    expect(assistant?.content).toEqual([
      {
        type: 'reasoning',
        text: 'The person wrote a message. I count its words, then quote it.',
        startTime: expect.any(Number),
        endTime: expect.any(Number),
      },
      {
        type: 'tool-call',
        toolName: 'word_count',
        toolCallId: expect.any(String),
        input: { text: 'keep going' },
        output: { words: 2 },
        state: 'resolved',
        startTime: expect.any(Number),
        endTime: expect.any(Number),
      },
      { type: 'text', text: 'You said (2 words): "keep going"' },
    ])
  })

  it('finishes a resumed turn whose client left [R-TURN-SURVIVES-RESUME]', async () => {
    const gate = createGate()
    const server = await startHost({ sleep: gate.sleep })
    gate.open()
    const {
      suspended,
      gate: closedGate,
      host: resumer,
    } = await suspendedWithSecondHost(server, 't2r')
    const client = new AbortController()
    const reader = await turn(
      resume(
        resumer,
        {
          runId: suspended.payload.runId,
          toolCallId: suspended.payload.toolCallId,
          resumeData: { approved: true },
        },
        'alice',
        client.signal,
      ),
    )
    const { executionId } = await reader.until('execution-started')
    client.abort()
    await waitFor(
      () => !resumer.backend.inspect.hasListener(executionId),
      'the server to see the client leave',
    )

    closedGate.open()
    await waitFor(
      async () => (await readHistory(resumer, 't2r')).activeExecutionId === null,
      'the resume to end',
    )
    const history = await readHistory(resumer, 't2r')
    const assistant = assistantOf(history.messages, executionId)
    expect(assistant?.executionStatus).toBe('success')
    expect(assistant?.content.at(-1)).toEqual({
      type: 'text',
      text: 'Approved: the email was sent.',
    })
  })

  it('abandons a request whose client leaves before execution-started [R-SERVER-ABANDON]', async () => {
    const server = await startHost()
    const body = JSON.stringify({
      message: 'never sent in full',
      sessionId: 't2a',
      newSession: true,
    })
    await sendRawAndClose(
      server,
      `POST ${chatPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer alice\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    )
    await waitFor(
      () => server.backend.inspect.countRequests({ route: 'chat' }) === 1,
      'the request to be handled',
    )
    expect(server.backend.inspect.threads()).toEqual([])
    expect(server.backend.inspect.executions()).toEqual([])
  })
})

describe('3. snapshots are recorded in batches and announced to every tab of the owner [R-READ-LATEST R-SERVER-PUSH R-SERVER-SNAPSHOTS R-WIRE-ENDPOINTS]', () => {
  it('sends agentExecutionUpdated to both tabs for each recording and for the end', async () => {
    const gate = createGate()
    const server = await startHost({ sleep: gate.sleep, snapshotMs: 5 })
    const tabA = await openPushSocket(server, 'alice')
    const tabB = await openPushSocket(server, 'alice')
    const stranger = await openPushSocket(server, 'bob')
    await waitFor(
      () => server.backend.inspect.pushConnections('alice') === 2,
      'both tabs to subscribe',
    )

    const reader = await turn(
      chat(server, { message: '/long 3', sessionId: 't3', newSession: true }),
    )
    const { executionId } = await reader.until('execution-started')
    // The first batch: what the agent streamed before its first pause.
    await waitFor(
      () => tabA.messages.length >= 2 && tabB.messages.length >= 2,
      'a batch while running',
    )
    const running = await readHistory(server, 't3')
    expect(running.activeExecutionId).toBe(executionId)

    gate.open()
    await reader.rest()
    const recordings = server.backend.inspect.recordings.filter(
      (entry) => entry.executionId === executionId,
    )
    await waitFor(
      () =>
        tabA.messages.length === recordings.length && tabB.messages.length === recordings.length,
      'every recording to reach both tabs',
    )
    // The sequence: recorded once before execution-started, batches while running, then the end.
    expect(recordings.length).toBeGreaterThanOrEqual(3)
    expect(recordings.map((entry) => entry.status)).toEqual([
      ...Array<string>(recordings.length - 1).fill('running'),
      'success',
    ])
    const announcement = {
      type: 'agentExecutionUpdated',
      data: { projectId: 'p1', agentId: 'a1', threadId: 't3', executionId },
    }
    expect(tabA.messages).toEqual(Array(recordings.length).fill(announcement))
    expect(tabB.messages).toEqual(tabA.messages)
    expect(stranger.messages).toEqual([])
    tabA.close()
    tabB.close()
    stranger.close()
  })

  it('serves the push channel as SSE when asked for text/event-stream [R-SERVER-PUSH]', async () => {
    const server = await startHost()
    const client = new AbortController()
    const response = await fetch(`${server.url}/rest/push`, {
      headers: { Authorization: 'Bearer alice', Accept: 'text/event-stream' },
      signal: client.signal,
    })
    expect(response.status).toBe(200)
    await waitFor(
      () => server.backend.inspect.pushConnections('alice') === 1,
      'the SSE tab to subscribe',
    )
    await (await turn(chat(server, { message: 'hi', sessionId: 't3s', newSession: true }))).rest()
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    let text = ''
    while (!text.includes('"success"') && !text.includes('agentExecutionUpdated')) {
      const { value } = await reader.read()
      text += new TextDecoder().decode(value)
    }
    expect(text.startsWith(':ok\n\n')).toBe(true)
    expect(text).toContain(
      'data: {"type":"agentExecutionUpdated","data":{"projectId":"p1","agentId":"a1","threadId":"t3s"',
    )
    client.abort()
    await waitFor(
      () => server.backend.inspect.pushConnections('alice') === 0,
      'the SSE tab to unsubscribe',
    )
  })
})

describe('4. a second message while a turn runs is refused in-band [R-SERVER-ONE-TURN R-WIRE-CONFLICT-LINE]', () => {
  it('answers turn_already_running and records nothing for it', async () => {
    const gate = createGate()
    const server = await startHost({ sleep: gate.sleep })
    const first = await turn(chat(server, { message: 'first', sessionId: 't4', newSession: true }))
    const { executionId } = await first.until('execution-started')

    const second = await turn(chat(server, { message: 'second', sessionId: 't4' }))
    expect(await second.rest()).toEqual([
      {
        type: 'error',
        message: 'A turn is already running in this conversation.',
        errorCode: 'turn_already_running',
      },
    ])
    expect(server.backend.inspect.countRequests({ route: 'chat', method: 'POST' })).toBe(2)
    expect(server.backend.inspect.executions().map((execution) => execution.id)).toEqual([
      executionId,
    ])
    const history = await readHistory(server, 't4')
    expect(history.messages.map((message) => message.id)).toEqual([
      `${executionId}:user`,
      `${executionId}:assistant`,
    ])

    gate.open()
    await first.rest()
  })
})

describe('5. Stop names the execution it cancels [R-WIRE-ENDPOINTS R-STOP-BY-ID]', () => {
  it('cancels the running execution; recorded state shows cancelled and no active execution [R-SERVER-STOP-RECORD R-STOP-RECORD R-SERVER-STATUSES]', async () => {
    const gate = createGate()
    const server = await startHost({ sleep: gate.sleep })
    const reader = await turn(
      chat(server, { message: '/delegate 500', sessionId: 't5', newSession: true }),
    )
    const { executionId } = await reader.until('execution-started')
    // Step the agent past its first pause, into the delegation's tool execution.
    await waitFor(() => gate.paused === 1, 'the first pause')
    gate.step()
    await reader.until('tool-execution-start')

    expect(await del(server, stopPath('t5', executionId))).toEqual({
      status: 200,
      body: { data: { cancelRequested: true } },
    })
    const events = await reader.rest()
    expect(events.slice(-2)).toEqual([
      {
        type: 'tool-result',
        toolCallId: expect.any(String),
        toolName: 'delegate',
        output: null,
        canceled: true,
      },
      { type: 'done', sessionId: 't5', executionId },
    ])
    const history = await readHistory(server, 't5')
    expect(history.activeExecutionId).toBeNull()
    expect(history.messages.map((message) => message.executionStatus)).toEqual([
      'cancelled',
      'cancelled',
    ])
    expect(toolCalls(assistantOf(history.messages, executionId))[0]).toMatchObject({
      state: 'rejected',
      error: 'Cancelled',
    })
  })

  it('answers false for an ended execution and leaves a later running one untouched [R-SERVER-STOP-LATE R-STOP-LATE R-STOP-ANSWER]', async () => {
    const gate = createGate()
    const server = await startHost({ sleep: gate.sleep })
    gate.open()
    const earlier = await turn(chat(server, { message: 'one', sessionId: 't5b', newSession: true }))
    const { executionId: ended } = await earlier.until('execution-started')
    await earlier.rest()

    const closed = createGate()
    const later = await startHost({
      sleep: closed.sleep,
      store: server.backend.store,
      bus: server.backend.bus,
      mainId: server.backend.mainId,
    })
    const reader = await turn(chat(later, { message: 'two', sessionId: 't5b' }))
    const { executionId: current } = await reader.until('execution-started')

    expect(await del(later, stopPath('t5b', ended))).toEqual({
      status: 200,
      body: { data: { cancelRequested: false } },
    })
    expect((await readHistory(later, 't5b')).activeExecutionId).toBe(current)
    expect(later.backend.inspect.running()).toEqual([current])

    closed.open()
    expect((await reader.rest()).at(-1)).toEqual({
      type: 'done',
      sessionId: 't5b',
      executionId: current,
    })
    expect(assistantOf((await readHistory(later, 't5b')).messages, current)?.executionStatus).toBe(
      'success',
    )
  })
})

describe('a second Stop while the execution still runs [R-SERVER-STOP-AGAIN]', () => {
  it('answers cancelRequested: true to each Stop until the execution has ended', async () => {
    // An agent busy in work that does not watch the signal (a tool's HTTP call): the first Stop
    // aborts it, but it runs on until that work returns.
    let release = () => {}
    const busy = new Promise<void>((resolve) => (release = resolve))
    const server = await startHost({
      agent: async (_input, context) => {
        context.emit({ type: 'start-step' })
        await busy
        return { kind: 'done' }
      },
    })
    const reader = await turn(chat(server, { message: 'x', sessionId: 't5c', newSession: true }))
    const { executionId } = await reader.until('execution-started')
    const accepted = { status: 200, body: { data: { cancelRequested: true } } }
    try {
      expect(await del(server, stopPath('t5c', executionId))).toEqual(accepted)
      expect(server.backend.inspect.running()).toEqual([executionId])
      expect(await del(server, stopPath('t5c', executionId))).toEqual(accepted)
    } finally {
      release()
    }
    await reader.rest()
    expect(
      assistantOf((await readHistory(server, 't5c')).messages, executionId)?.executionStatus,
    ).toBe('cancelled')
    expect(await del(server, stopPath('t5c', executionId))).toEqual({
      status: 200,
      body: { data: { cancelRequested: false } },
    })
  })
})

describe('6. a suspended turn [R-SERVER-SUSPEND R-WIRE-ENDPOINTS]', () => {
  it('ends the stream with tool-call-suspended, lists the suspension, and resumes as a new execution [R-RECOVER-SUSPENDED]', async () => {
    const server = await startHost()
    const reader = await turn(
      chat(server, { message: '/suspend', sessionId: 't6', newSession: true }),
    )
    const { executionId } = await reader.until('execution-started')
    const events = await reader.rest()
    const last = events.at(-1)
    expect(last?.type).toBe('tool-call-suspended')
    expect(events.some((event) => event.type === 'done')).toBe(false)
    const { payload } = last as Extract<TurnEvent, { type: 'tool-call-suspended' }>

    const suspendedState = await readHistory(server, 't6')
    expect(suspendedState.activeExecutionId).toBeNull()
    expect(suspendedState.openSuspensions).toEqual([
      { toolCallId: payload.toolCallId, runId: payload.runId, suspendPayload: payload },
    ])
    const suspendedMessage = assistantOf(suspendedState.messages, executionId)
    expect(suspendedMessage?.executionStatus).toBe('success')
    expect(toolCalls(suspendedMessage)).toEqual([
      {
        type: 'tool-call',
        toolName: 'request_approval',
        toolCallId: payload.toolCallId,
        input: { action: 'send_email', to: 'team@example.com' },
        suspendPayload: payload,
      },
    ])

    const resumed = await turn(
      resume(server, {
        runId: payload.runId,
        toolCallId: payload.toolCallId,
        resumeData: { approved: true },
      }),
    )
    const started = await resumed.until('execution-started')
    expect(started.executionId).not.toBe(executionId)
    expect((await resumed.rest()).at(-1)?.type).toBe('done')

    const after = await readHistory(server, 't6')
    expect(after.openSuspensions).toEqual([])
    // A resume records only the assistant's answer, no person's text.
    expect(after.messages.map((message) => message.id)).toEqual([
      `${executionId}:user`,
      `${executionId}:assistant`,
      `${started.executionId}:assistant`,
    ])
    expect(toolCalls(assistantOf(after.messages, started.executionId))).toEqual([
      expect.objectContaining({
        toolCallId: payload.toolCallId,
        state: 'resolved',
        output: { approved: true, sent: true },
      }),
    ])
  })

  it('cancels a suspended run through DELETE .../chat/runs/:runId [R-STOP-SUSPENDED]', async () => {
    const server = await startHost()
    const suspended = await (
      await turn(chat(server, { message: '/suspend', sessionId: 't6c', newSession: true }))
    ).until('tool-call-suspended')
    const runPath = `${chatPath}/runs/${suspended.payload.runId}`
    expect(await del(server, runPath)).toEqual({ status: 200, body: { data: { cancelled: true } } })
    const history = await readHistory(server, 't6c')
    expect(history.openSuspensions).toEqual([])
    expect(history.activeExecutionId).toBeNull()
    expect(toolCalls(history.messages[1])[0]).toMatchObject({ state: 'rejected' })
    expect(await del(server, runPath)).toEqual({
      status: 200,
      body: { data: { cancelled: false } },
    })
    const late = await resume(server, {
      runId: suspended.payload.runId,
      toolCallId: suspended.payload.toolCallId,
      resumeData: { approved: true },
    })
    expect(late.status).toBe(409)
  })
})

describePrivacy({ name: 'with the development users', start: startHost, reader: 'carol' })

describe('the development users [R-SERVER-SCOPES]', () => {
  it('answers 401 to no user or an unknown one, and takes the cookie as well as the bearer header', async () => {
    const server = await startHost()
    expect((await post(server, chatPath, { message: 'hi' }, null)).status).toBe(401)
    expect((await post(server, chatPath, { message: 'hi' }, 'mallory')).status).toBe(401)
    const cookie = await fetch(`${server.url}${chatPath}/t7c/messages`, {
      headers: { Cookie: 'preview-chat-user=alice' },
    })
    expect(cookie.status).toBe(404)
    expect(await cookie.json()).toMatchObject({ code: 'not_found' })
  })
})

describe('8. a delegation records at most 4,000 characters of child text and reasoning [R-SERVER-DELEGATION R-DELEGATION-TRUNCATED]', () => {
  it('caps the recorded child trace while the live stream carries all of it', async () => {
    const server = await startHost()
    const reader = await turn(
      chat(server, { message: '/delegate 5000', sessionId: 't8', newSession: true }),
    )
    const { executionId } = await reader.until('execution-started')
    const events = await reader.rest()
    const live = events
      .flatMap((event) => (event.type === 'subagent-chunk' ? [event.chunk] : []))
      .flatMap((chunk) => ('delta' in chunk ? [chunk.delta] : []))
      .join('')
    expect(live.length).toBe(5000)

    const delegation = toolCalls(
      assistantOf((await readHistory(server, 't8')).messages, executionId),
    )[0]
    const trace = delegation?.childTrace
    const reasoning = trace?.reasoningSegments.map((segment) => segment.content).join('') ?? ''
    // In arrival order: 2,500 characters of reasoning, then text up to the shared limit.
    expect(reasoning).toBe('r'.repeat(2500))
    expect(trace?.text).toBe('t'.repeat(1500))
    expect(reasoning.length + (trace?.text.length ?? 0)).toBe(4000)
    expect(trace?.steps).toEqual([
      { toolCallId: expect.any(String), toolName: 'search', running: false },
    ])
    expect(delegation?.output).toEqual({ summary: 'The child agent wrote 5000 characters.' })
  })
})

describe('9. two mains share one store and relay Stop [R-SERVER-STOP-RELAY]', () => {
  it('relays a Stop sent to the main that does not run the execution', async () => {
    const store = createMemoryStore()
    const shared = createMemoryBus()
    const relayed: [string, string][] = []
    const bus: PreviewChatBus = {
      ...shared,
      cancel: (mainId, executionId) => {
        relayed.push([mainId, executionId])
        return shared.cancel(mainId, executionId)
      },
    }
    const gate = createGate()
    const mainA = await startHost({
      backend: createPreviewChatBackend({
        dev: true,
        store,
        bus,
        mainId: 'main-a',
        sleep: gate.sleep,
        deltaMs: 0,
        snapshotMs: 5,
      }),
    })
    const mainB = await startHost({
      backend: createPreviewChatBackend({
        dev: true,
        store,
        bus,
        mainId: 'main-b',
        sleep: gate.sleep,
        deltaMs: 0,
        snapshotMs: 5,
      }),
    })
    const tabOnB = await openPushSocket(mainB, 'alice')

    const reader = await turn(
      chat(mainA, { message: '/long 10', sessionId: 't9', newSession: true }),
    )
    const { executionId } = await reader.until('execution-started')
    expect((await readHistory(mainB, 't9')).activeExecutionId).toBe(executionId)

    expect(await del(mainB, stopPath('t9', executionId))).toEqual({
      status: 200,
      body: { data: { cancelRequested: true } },
    })
    expect(relayed).toEqual([['main-a', executionId]])
    expect((await reader.rest()).at(-1)?.type).toBe('done')
    const history = await readHistory(mainB, 't9')
    expect(history.activeExecutionId).toBeNull()
    expect(assistantOf(history.messages, executionId)?.executionStatus).toBe('cancelled')
    // The bus is shared too: a tab connected to main B hears of main A's execution.
    await waitFor(() => tabOnB.messages.length > 0, 'the tab on main B to hear of it')
    tabOnB.close()
    await Promise.all([mainA.backend.close(), mainB.backend.close()])
  })
})

describe('10. bad input never crashes it [R-SERVER-ERRORS]', () => {
  it('answers malformed JSON with 400 { code, message }', async () => {
    const server = await startHost()
    const response = await post(server, chatPath, '{"message": ')
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({
      code: 'bad_request',
      message: expect.any(String),
      hint: expect.any(String),
    })
  })

  it('answers a blank message with 400 before any stream starts [R-WIRE-REQUEST-BODIES]', async () => {
    const server = await startHost()
    const response = await post(server, chatPath, {
      message: '   ',
      sessionId: 'b',
      newSession: true,
    })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({
      code: 'bad_request',
      message: expect.stringContaining('message'),
    })
    expect(server.backend.inspect.threads()).toEqual([])
  })

  it('answers a body over 1 MiB with 413', async () => {
    const server = await startHost()
    const response = await post(server, chatPath, { message: 'x'.repeat(1024 * 1024) })
    expect(response.status).toBe(413)
    expect(await response.json()).toMatchObject({ code: 'payload_too_large' })
  })

  it('answers an unknown route with 404 and a known route with another method with 405', async () => {
    const server = await startHost()
    const unknown = await fetch(`${server.url}/rest/nothing/here`, {
      headers: { Authorization: 'Bearer alice' },
    })
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toMatchObject({ code: 'route_not_found' })
    const wrongMethod = await fetch(`${server.url}${chatPath}`, {
      headers: { Authorization: 'Bearer alice' },
    })
    expect(wrongMethod.status).toBe(405)
  })

  it('leaves no unhandled error when a client disconnects mid-write, and keeps serving [R-SERVER-NEVER-CRASHES]', async () => {
    const onError: unknown[] = []
    const server = await startHost({ snapshotMs: 5 })
    const hostWithHook = await startHost({
      backend: server.backend,
      onError: (error) => onError.push(error),
    })
    const body = JSON.stringify({ message: 'x'.repeat(50_000) })
    await sendRawAndClose(
      hostWithHook,
      `POST ${chatPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer alice\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 20_000)}`,
    )
    // And one that leaves in the middle of reading a turn stream.
    const client = new AbortController()
    const reader = await turn(
      chat(
        hostWithHook,
        { message: '/long 50', sessionId: 't10', newSession: true },
        'alice',
        client.signal,
      ),
    )
    await reader.until('text-delta')
    client.abort()
    await waitFor(
      async () => (await readHistory(hostWithHook, 't10')).activeExecutionId === null,
      'the turn to end',
    )
    expect(onError).toEqual([])
    expect(unhandled).toEqual([])
  })
})

describe('the live fold and the record agree on how a turn ended [R-LIVE-STREAM]', () => {
  it.each([
    ['a turn that succeeds', 'hello there'],
    ['a turn that fails', '/fail'],
  ])(
    '%s: both messages carry the same status and error, live (core’s fold of the stream) and recorded',
    async (_, message) => {
      const server = await startHost()
      const reader = await turn(chat(server, { message, sessionId: 't9', newSession: true }))
      const [started, ...events] = await reader.rest()
      if (started?.type !== 'execution-started') throw new Error('no execution-started')
      const live = applyTurnEvents(
        startTurn({ executionId: started.executionId, sessionId: 't9', message, createdAt: '' }),
        events,
        { delegationCharLimit: DEFAULT_DELEGATION_CHAR_LIMIT, now: () => 0 },
      )
      expect(live.ended).toBe(true)
      const recorded = await readHistory(server, 't9')
      const ending = (m: Message | null | undefined) => ({
        executionStatus: m?.executionStatus,
        executionError: m?.executionError,
      })
      expect([ending(live.user), ending(live.assistant)]).toEqual(
        recorded.messages.map((m) => ending(m)),
      )
    },
  )
})
