import { capabilitiesHeader, type TurnEvent } from '@preview-chat/core/contract'
import { afterEach, describe, expect, it } from 'vitest'
import { createPreviewChatBackend } from '../backend'
import {
  chatPath,
  closeHosts,
  collectUnhandled,
  createGate,
  send,
  startHost,
  upgradeHeaders,
  waitFor,
} from './harness'
import {
  historyPath,
  n8nAuth,
  n8nExecutionId,
  n8nHistory,
  n8nMessages,
  n8nPushSocket,
  n8nSend,
  n8nTurn,
  openN8nPushStream,
  startN8nHost,
} from './n8n-harness'

// The n8n-2.41 flavor: what the released n8n 2.41 does (fixtures/n8n-2.41/README.md), one
// behaviour per test, over real HTTP and WebSocket against the Node host on port 0.
const unhandled = collectUnhandled()
afterEach(closeHosts)

type Done = Required<Extract<TurnEvent, { type: 'done' }>>

describe('the turn stream [R-N8N-EMULATION]', () => {
  it('starts with :ok and the agent’s events (no execution-started), ends with done {sessionId, executionId}, with the SSE headers', async () => {
    const server = await startN8nHost()
    const reader = await n8nTurn(server, { message: '/words 3', sessionId: 'stream-1' })
    const events = await reader.rest()
    expect(reader.comments[0]).toBe(':ok')
    expect(events.map((event) => event.type)).toEqual([
      'start-step',
      'text-start',
      'text-delta',
      'text-delta',
      'text-delta',
      'text-end',
      'finish-step',
      'done',
    ])
    const done = events.at(-1) as Done
    expect(Object.keys(done)).toEqual(['type', 'sessionId', 'executionId'])
    expect(done.sessionId).toBe('stream-1')
    expect(done.executionId).toMatch(n8nExecutionId)
    expect(reader.response.headers.get('content-type')).toBe('text/event-stream; charset=UTF-8')
    expect(reader.response.headers.get('cache-control')).toBe('no-cache, no-transform')
    expect(reader.response.headers.get('x-accel-buffering')).toBe('no')
  })

  it('accepts a competing POST in the same thread (no turn_already_running): both run and end success [R-N8N-GATE]', async () => {
    const gate = createGate()
    const server = await startN8nHost({ sleep: gate.sleep })
    const first = await n8nTurn(server, { message: '/words 5', sessionId: 'busy' })
    await waitFor(() => gate.paused === 1, 'the first turn to run')
    // Once the thread is recorded (before that, see "two first POSTs at once").
    await waitFor(() => server.backend.inspect.recordings.length >= 1, 'the first record')
    const second = await n8nTurn(server, { message: '/words 5', sessionId: 'busy' })
    await waitFor(() => gate.paused === 2, 'the competing turn to run too')
    expect(server.backend.inspect.running()).toHaveLength(2)
    gate.open()
    const [a, b] = await Promise.all([first.rest(), second.rest()])
    expect(a.some((event) => event.type === 'error')).toBe(false)
    expect(b.some((event) => event.type === 'error')).toBe(false)
    const ids = [(a.at(-1) as Done).executionId, (b.at(-1) as Done).executionId]
    expect(new Set(ids).size).toBe(2)
    const messages = await n8nMessages(server, 'busy')
    expect(messages.map((message) => [message.id, message.executionStatus])).toEqual([
      [`${ids[0]}:user`, undefined],
      [`${ids[0]}:assistant`, 'success'],
      [`${ids[1]}:user`, undefined],
      [`${ids[1]}:assistant`, 'success'],
    ])
  })

  it('cancels the turn when the client closes the POST stream, recording cancelled with what was streamed', async () => {
    const gate = createGate()
    const server = await startN8nHost({ sleep: gate.sleep })
    const client = new AbortController()
    const reader = await n8nTurn(
      server,
      { message: '/words 50', sessionId: 'cut' },
      { signal: client.signal },
    )
    for (let word = 1; word <= 3; word++) {
      gate.step()
      await reader.until('text-delta')
    }
    const [executionId] = server.backend.inspect.running()
    client.abort()
    const ended = await waitFor(() => {
      const status = server.backend.inspect.executions().find((e) => e.id === executionId)?.status
      return status !== 'running' && status
    }, 'the turn to end')
    expect(ended).toBe('cancelled')
    expect(server.backend.inspect.running()).toEqual([])
    const messages = await n8nMessages(server, 'cut')
    expect(messages[1]).toMatchObject({
      id: `${executionId}:assistant`,
      executionStatus: 'cancelled',
      content: [{ type: 'text', text: 'word1 word2 word3 ' }],
    })
  })

  it('records the turn with the same fold as the client: the record is the streamed text [R-FOLD-ONE]', async () => {
    const server = await startN8nHost()
    const events = await (await n8nTurn(server, { message: '/words 4', sessionId: 'fold' })).rest()
    const streamed = events
      .filter((event) => event.type === 'text-delta')
      .map((event) => (event as Extract<TurnEvent, { type: 'text-delta' }>).delta)
      .join('')
    const [, assistant] = await n8nMessages(server, 'fold')
    expect(assistant?.content).toEqual([{ type: 'text', text: streamed }])
    expect(streamed).toBe('word1 word2 word3 word4')
  })
})

describe('history [R-N8N-EMULATION]', () => {
  it('answers {data: {messages, openSuspensions}} without activeExecutionId; user messages have no executionStatus', async () => {
    const server = await startN8nHost()
    await (await n8nTurn(server, { message: 'hello there', sessionId: 'shape' })).rest()
    const { status, body } = await n8nHistory(server, 'shape')
    expect(status).toBe(200)
    expect(Object.keys(body)).toEqual(['data'])
    const data = body.data as Record<string, unknown>
    expect(Object.keys(data)).toEqual(['messages', 'openSuspensions'])
    const [user, assistant] = data.messages as Record<string, unknown>[]
    expect(Object.keys(user!)).toEqual(['id', 'role', 'content', 'executionId', 'createdAt'])
    expect(Object.keys(assistant!)).toEqual([
      'id',
      'role',
      'content',
      'executionId',
      'executionStatus',
      'createdAt',
    ])
  })

  it('answers 404 "Thread not found" for a brand-new thread until its first snapshot is recorded, then the user message alone until the first output', async () => {
    const gate = createGate()
    const server = await startN8nHost({ sleep: gate.sleep, snapshotMs: 60_000 })
    const reader = await n8nTurn(server, { message: '/words 5', sessionId: 'fresh' })
    await waitFor(() => gate.paused === 1, 'the turn to run')
    const before = await n8nHistory(server, 'fresh')
    expect(before.status).toBe(404)
    expect(before.body).toMatchObject({ code: 404, message: 'Thread "fresh" not found' })
    expect(Object.keys(before.body)).toEqual(['code', 'message', 'stacktrace'])
    gate.open()
    await reader.rest()

    // With snapshots every few ms: the first one shows the thread, the assistant only with output.
    const paced = createGate()
    const live = await startN8nHost({ sleep: paced.sleep, snapshotMs: 5 })
    const turn = await n8nTurn(live, { message: '/words 5', sessionId: 'mid' })
    await waitFor(() => live.backend.inspect.recordings.length >= 1, 'the first snapshot')
    const [executionId] = live.backend.inspect.running()
    const mid = await n8nMessages(live, 'mid')
    expect(mid.map((message) => message.id)).toEqual([`${executionId}:user`])
    paced.step()
    await turn.until('text-delta')
    const shown = await waitFor(async () => {
      const messages = await n8nMessages(live, 'mid')
      return messages.length === 2 && messages
    }, 'the assistant message with the first output')
    expect(shown[1]).toMatchObject({
      id: `${executionId}:assistant`,
      executionStatus: 'running',
      content: [{ type: 'text', text: 'word1 ' }],
    })
    paced.open()
    await turn.rest()
  })
})

describe('ids and sessions [R-N8N-EMULATION R-WIRE-MESSAGE-IDS]', () => {
  it('makes 16-character execution ids of letters and digits; messages are `${executionId}:user|assistant`', async () => {
    const server = await startN8nHost()
    const ids = new Set<string>()
    for (let index = 0; index < 5; index++) {
      const events = await (await n8nTurn(server, { message: 'hi', sessionId: 'ids' })).rest()
      ids.add((events.at(-1) as Done).executionId)
    }
    expect(ids.size).toBe(5)
    for (const id of ids) expect(id).toMatch(n8nExecutionId)
    const messages = await n8nMessages(server, 'ids')
    expect(messages.map((message) => message.id)).toEqual(
      [...ids].flatMap((id) => [`${id}:user`, `${id}:assistant`]),
    )
  })

  it('creates the thread a client-chosen sessionId names, ignores newSession, and makes a UUID when sessionId is missing', async () => {
    const server = await startN8nHost()
    const chosen = await (
      await n8nTurn(server, { message: 'first', sessionId: 'client-thread-1' })
    ).rest()
    expect((chosen.at(-1) as Done).sessionId).toBe('client-thread-1')
    // `newSession` is not in 2.41: the same thread goes on.
    await (
      await n8nTurn(server, { message: 'again', sessionId: 'client-thread-1', newSession: true })
    ).rest()
    expect(await n8nMessages(server, 'client-thread-1')).toHaveLength(4)

    const minted = await (await n8nTurn(server, { message: 'no id' })).rest()
    const { sessionId } = minted.at(-1) as Done
    expect(sessionId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    )
    expect(await n8nMessages(server, sessionId)).toHaveLength(2)
  })
})

describe('client message ids and first messages, as 2.41.1 was seen live on 2026-12-04 [R-N8N-EMULATION]', () => {
  it('accepts a messageId and keeps it nowhere: not in the history, not in the store [R-N8N-NO-DEDUPE]', async () => {
    const server = await startN8nHost()
    const messageId = crypto.randomUUID()
    await (await n8nTurn(server, { message: 'hi', sessionId: 'kept-nowhere', messageId })).rest()
    const read = await n8nSend(server, { path: historyPath('kept-nowhere') })
    expect(read.status).toBe(200)
    expect(read.body).not.toContain(messageId)
    const key = { ownerId: 'alice', projectId: 'p1', agentId: 'a1', threadId: 'kept-nowhere' }
    expect(await server.backend.store.hasMessageId(key, messageId)).toBe(false)
    expect(JSON.stringify(server.backend.inspect.threads())).not.toContain(messageId)
  })

  it('drops newSession: false as true, so an unknown thread is made either way', async () => {
    const server = await startN8nHost()
    const events = await (
      await n8nTurn(server, { message: 'hi', sessionId: 'made-anyway', newSession: false })
    ).rest()
    expect(events.at(-1)).toMatchObject({ type: 'done', sessionId: 'made-anyway' })
    expect(await n8nMessages(server, 'made-anyway')).toHaveLength(2)
  })

  it('sends no capabilities header on any answer: turns, reads, 304s, errors, pages [R-N8N-NO-DEDUPE]', async () => {
    const server = await startN8nHost()
    const reader = await n8nTurn(server, { message: 'hi', sessionId: 'plain', messageId: 'm1' })
    await reader.rest()
    const read = await n8nSend(server, { path: historyPath('plain') })
    const answers = [
      reader.response.headers.get(capabilitiesHeader),
      read.headers[capabilitiesHeader.toLowerCase()],
      ...(
        await Promise.all([
          n8nSend(server, {
            path: historyPath('plain'),
            headers: { ...n8nAuth(), 'If-None-Match': read.headers.etag as string },
          }),
          n8nSend(server, { path: historyPath('none') }),
          n8nSend(server, { path: historyPath('plain'), headers: {} }),
          n8nSend(server, { method: 'POST', path: chatPath, body: { message: ' ' } }),
          n8nSend(server, { method: 'DELETE', path: `${chatPath}/plain/executions/x` }),
        ])
      ).map((answer) => [answer.status, answer.headers[capabilitiesHeader.toLowerCase()]]),
    ]
    expect(answers).toEqual([
      null,
      undefined,
      [304, undefined],
      [404, undefined],
      [401, undefined],
      [400, undefined],
      [404, undefined],
    ])
  })

  it('two first POSTs at once to a new thread: one turn, and on the other stream :ok then an in-band SQLITE_CONSTRAINT error [R-N8N-FIRST-POST-RACE]', async () => {
    const gate = createGate()
    const server = await startN8nHost({ sleep: gate.sleep, snapshotMs: 60_000 })
    const first = await n8nTurn(server, { message: '/words 3', sessionId: 'race' })
    await waitFor(() => gate.paused === 1, 'the first turn to run')
    // The thread is not recorded yet: a read does not find it, a second first message makes it again.
    expect((await n8nHistory(server, 'race')).status).toBe(404)
    const second = await n8nTurn(server, { message: 'me too', sessionId: 'race' })
    expect(await second.rest()).toEqual([
      { type: 'error', message: 'SQLITE_CONSTRAINT: UNIQUE constraint failed: agents_threads.id' },
    ])
    expect(second.comments[0]).toBe(':ok')
    gate.open()
    expect((await first.rest()).at(-1)?.type).toBe('done')
    expect(server.backend.inspect.executions()).toHaveLength(1)
    const messages = await n8nMessages(server, 'race')
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant'])
    expect(messages[0]?.content).toEqual([{ type: 'text', text: '/words 3' }])
    // Once recorded, a message to the thread is taken as any other (two turns may run at once).
    const later = await n8nTurn(server, { message: 'later', sessionId: 'race' })
    expect((await later.rest()).at(-1)?.type).toBe('done')
    expect(server.backend.inspect.executions()).toHaveLength(2)
  })
})

describe('stop and suspended runs [R-N8N-EMULATION]', () => {
  it('has no Stop route: DELETE …/executions/:executionId answers Express’s HTML 404 and the turn runs on', async () => {
    const gate = createGate()
    const server = await startN8nHost({ sleep: gate.sleep })
    const reader = await n8nTurn(server, { message: '/words 3', sessionId: 'nostop' })
    await waitFor(() => gate.paused === 1, 'the turn to run')
    const [executionId] = server.backend.inspect.running()
    const path = `${chatPath}/nostop/executions/${executionId}`
    const answer = await n8nSend(server, { method: 'DELETE', path })
    expect(answer.status).toBe(404)
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(answer.body).toContain(`<pre>Cannot DELETE ${path}</pre>`)
    expect(server.backend.inspect.running()).toEqual([executionId])
    expect(server.backend.inspect.countRequests({ route: 'stop' })).toBe(1)
    gate.open()
    expect((await reader.rest()).at(-1)?.type).toBe('done')
  })

  it('answers DELETE …/chat/runs/:runId with {data: {cancelled: false}} for an unknown run, true for an open one', async () => {
    const server = await startN8nHost()
    const unknown = await n8nSend(server, { method: 'DELETE', path: `${chatPath}/runs/nope` })
    expect([unknown.status, JSON.parse(unknown.body)]).toEqual([
      200,
      { data: { cancelled: false } },
    ])

    const events = await (await n8nTurn(server, { message: '/suspend', sessionId: 'run' })).rest()
    const suspended = events.at(-1) as Extract<TurnEvent, { type: 'tool-call-suspended' }>
    const path = `${chatPath}/runs/${suspended.payload.runId}`
    const open = await n8nSend(server, { method: 'DELETE', path })
    expect(JSON.parse(open.body)).toEqual({ data: { cancelled: true } })
    const again = await n8nSend(server, { method: 'DELETE', path })
    expect(JSON.parse(again.body)).toEqual({ data: { cancelled: false } })
  })

  it('answers a resume of an unknown run in-band, as n8n does ("Checkpoint … not found")', async () => {
    const server = await startN8nHost()
    const answer = await n8nSend(server, {
      method: 'POST',
      path: `${chatPath}/resume`,
      body: { runId: 'r1', toolCallId: 't1', resumeData: {} },
    })
    expect(answer.status).toBe(200)
    expect(answer.body).toBe(
      ':ok\n\ndata: {"type":"error","message":"Checkpoint r1 not found and cannot be resumed"}\n\n',
    )
  })
})

describe('errors [R-N8N-EMULATION]', () => {
  it('answers an unknown thread 404 {code: 404, message: `Thread "<id>" not found`, stacktrace}, also another user’s', async () => {
    const server = await startN8nHost()
    await (await n8nTurn(server, { message: 'mine', sessionId: 'alices' })).rest()
    for (const [user, threadId] of [
      ['alice', 'unknown'],
      ['bob', 'alices'],
    ]) {
      const answer = await n8nSend(server, { path: historyPath(threadId!), headers: n8nAuth(user) })
      expect(answer.status).toBe(404)
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8')
      const body = JSON.parse(answer.body) as Record<string, unknown>
      expect(body).toMatchObject({ code: 404, message: `Thread "${threadId}" not found` })
      expect(body.stacktrace).toMatch(/^ResponseError: Thread/)
    }
  })

  it('refuses a blank message with 400 {code: "custom", …, path: ["message"]}, and other bodies with zod’s issue', async () => {
    const server = await startN8nHost()
    const post = (body: unknown) => n8nSend(server, { method: 'POST', path: chatPath, body })
    const blank = await post({ message: '   ' })
    expect([blank.status, JSON.parse(blank.body)]).toEqual([
      400,
      {
        code: 'custom',
        message: 'Message text or at least one attachment is required',
        path: ['message'],
      },
    ])
    expect(JSON.parse((await post({})).body)).toEqual({
      code: 'invalid_type',
      expected: 'string',
      received: 'undefined',
      path: ['message'],
      message: 'Required',
    })
    expect(JSON.parse((await post({ message: 5 })).body)).toMatchObject({
      code: 'invalid_type',
      received: 'number',
      message: 'Expected string, received number',
    })
    expect(JSON.parse((await post({ message: 'x', sessionId: '' })).body)).toMatchObject({
      code: 'too_small',
      path: ['sessionId'],
    })
    const notJson = await n8nSend(server, {
      method: 'POST',
      path: chatPath,
      headers: { ...n8nAuth(), 'Content-Type': 'application/json' },
    })
    expect(notJson.status).toBe(500)
    expect(notJson.body).toContain('ResponseError: Failed to parse request body')
    expect(server.backend.inspect.executions()).toEqual([])
  })

  it('answers 401 {status: "error", message: "Unauthorized"} without the cookie, without a browser-id, and to a bearer (not n8n’s auth)', async () => {
    const server = await startN8nHost()
    const path = historyPath('t')
    for (const headers of [
      {},
      { Cookie: 'n8n-auth=alice' },
      { Cookie: 'n8n-auth=alice', 'browser-id': ' ' },
      { Authorization: 'Bearer alice', 'browser-id': 'b' },
      { Cookie: 'preview-chat-user=alice', 'browser-id': 'b' },
      { Cookie: 'n8n-auth=mallory', 'browser-id': 'b' },
    ] as Record<string, string>[]) {
      const answer = await n8nSend(server, { path, headers })
      expect(answer.status).toBe(401)
      expect(JSON.parse(answer.body)).toEqual({ status: 'error', message: 'Unauthorized' })
    }
    // n8n clears a cookie it refused.
    const refused = await n8nSend(server, { path, headers: { Cookie: 'n8n-auth=alice' } })
    expect(refused.headers['set-cookie']).toEqual([
      'n8n-auth=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT',
    ])
    const accepted = await n8nSend(server, { path, headers: n8nAuth('alice') })
    expect(accepted.status).toBe(404)
  })

  it('answers 403 like n8n for a user without the scope', async () => {
    const server = await startN8nHost()
    const answer = await n8nSend(server, {
      method: 'POST',
      path: chatPath,
      body: { message: 'hi' },
      headers: n8nAuth('carol'),
    })
    expect([answer.status, JSON.parse(answer.body)]).toEqual([
      403,
      { status: 'error', message: 'User is missing a scope required to perform this action' },
    ])
  })

  it('answers unknown routes and other methods with Express’s HTML 404', async () => {
    const server = await startN8nHost()
    for (const [method, path] of [
      ['GET', '/rest/nope'],
      ['PUT', chatPath],
      ['GET', chatPath],
      ['GET', '/elsewhere'],
    ] as const) {
      const answer = await n8nSend(server, { method, path })
      expect(answer.status).toBe(404)
      expect(answer.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(answer.headers['content-security-policy']).toBe("default-src 'none'")
      expect(answer.body).toBe(
        `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot ${method} ${path}</pre>\n</body>\n</html>\n`,
      )
    }
  })
})

describe('push [R-N8N-EMULATION]', () => {
  it('serves GET /rest/push?pushRef=<id> as SSE without Accept (cookie only: n8n checks no browser-id there), announcing each snapshot and the end twice', async () => {
    const gate = createGate()
    const server = await startN8nHost({ sleep: gate.sleep, snapshotMs: 5 })
    const push = await openN8nPushStream(server)
    expect(push.response.headers.get('content-type')).toBe('text/event-stream; charset=UTF-8')
    expect(push.response.headers.get('cache-control')).toBe('no-cache')
    expect(push.response.headers.get('incremental')).toBe('?1')
    const reader = await n8nTurn(server, { message: '/words 3', sessionId: 'pushed' })
    for (let step = 0; step < 3; step++) {
      const before = server.backend.inspect.recordings.length
      gate.step()
      await waitFor(() => server.backend.inspect.recordings.length > before, 'a snapshot')
    }
    const { executionId } = (await reader.rest()).at(-1) as Done
    const snapshots = server.backend.inspect.recordings.length
    await waitFor(() => push.messages.length === snapshots + 1, 'every announcement')
    // One per snapshot (each step's, and the end's), and the end once more.
    expect(snapshots).toBeGreaterThanOrEqual(3)
    expect(push.text().startsWith(':ok\n\n')).toBe(true)
    for (const message of push.messages) {
      expect(message).toEqual({
        type: 'agentExecutionUpdated',
        data: { projectId: 'p1', agentId: 'a1', threadId: 'pushed', executionId },
      })
    }
    push.close()
  })

  it('refuses a push request without pushRef with HTTP 500 text/html, an empty one too, and no user with 401', async () => {
    const server = await startN8nHost()
    const cookie = { Cookie: 'n8n-auth=alice' }
    const missing = await send(server, { path: '/rest/push', headers: cookie })
    expect(missing.status).toBe(500)
    expect(missing.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(missing.body).toContain('<pre>ResponseError: Request is not a PushRequest<br>')
    const empty = await send(server, { path: '/rest/push?pushRef=', headers: cookie })
    expect(empty.status).toBe(500)
    expect(empty.body).toContain('The query parameter &quot;pushRef&quot; is missing!')
    const anonymous = await send(server, { path: '/rest/push?pushRef=x' })
    expect([anonymous.status, JSON.parse(anonymous.body)]).toEqual([
      401,
      { status: 'error', message: 'Unauthorized' },
    ])
  })

  it('with pushBackend "sse" (the default) serves no WebSocket: the upgrade is dropped', async () => {
    const server = await startN8nHost()
    const socket = await n8nPushSocket(server, '?pushRef=x')
    expect(socket).toMatchObject({ opened: false, code: 1006 })
  })

  it('with pushBackend "websocket": the WebSocket gets the messages, a plain GET 401, and one without pushRef or user opens then closes without a status (1005)', async () => {
    const server = await startN8nHost({ pushBackend: 'websocket' })
    const tab = n8nPushSocket(server, '?pushRef=tab')
    await waitFor(
      () => server.backend.inspect.pushConnections('alice') === 1,
      'the socket to subscribe',
    )
    const { executionId } = (
      await (await n8nTurn(server, { message: '/words 2', sessionId: 'ws' })).rest()
    ).at(-1) as Done
    await waitFor(() => tab.socket.readyState === tab.socket.OPEN, 'the socket')
    tab.socket.close()
    const received = await tab
    expect(received.messages.length).toBeGreaterThanOrEqual(2)
    expect(received.messages.every((message) => message.data.executionId === executionId)).toBe(
      true,
    )

    const plain = await send(server, { path: '/rest/push?pushRef=x', headers: n8nAuth() })
    expect([plain.status, plain.body]).toEqual([401, 'Unauthorized'])
    expect(await n8nPushSocket(server, '')).toMatchObject({ opened: true, code: 1005 })
    expect(await n8nPushSocket(server, '?pushRef=x', {})).toMatchObject({
      opened: true,
      code: 1005,
    })
    expect(await n8nPushSocket(server, '?pushRef=')).toMatchObject({
      opened: true,
      code: 1008,
      texts: ['The query parameter "pushRef" is missing!'],
    })
    // The host's own refusals stay: another path.
    const elsewhere = await send(server, { path: '/rest/other', headers: upgradeHeaders })
    expect(elsewhere.status).toBe(404)
  })
})

describe('the option', () => {
  it('defaults to the spec flavor and refuses what it does not know', async () => {
    expect(createPreviewChatBackend({ dev: true }).flavor).toBe('spec')
    expect(createPreviewChatBackend({ dev: true, flavor: 'n8n-2.41' }).flavor).toBe('n8n-2.41')
    expect(() => createPreviewChatBackend({ dev: true, flavor: 'n8n-9' as 'spec' })).toThrow(
      TypeError,
    )
    expect(() => createPreviewChatBackend({ dev: true, pushBackend: 'websocket' })).toThrow(
      /n8n-2.41/,
    )
    expect(() =>
      createPreviewChatBackend({ dev: true, flavor: 'n8n-2.41', pushBackend: 'grpc' as 'sse' }),
    ).toThrow(TypeError)
    // The spec flavor is unchanged: execution-started first, a bearer accepted.
    const spec = await startHost()
    const answer = await fetch(`${spec.url}${chatPath}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer alice' },
      body: JSON.stringify({ message: 'hi', sessionId: 's', newSession: true }),
    })
    expect(await answer.text()).toMatch(/^:ok\n\ndata: \{"type":"execution-started"/)
  })

  it('gives credentials in its own terms (for mocks that act as a user)', () => {
    const n8n = createPreviewChatBackend({ dev: true, flavor: 'n8n-2.41' })
    const headers = new Headers(n8n.credentials('bob'))
    expect(n8n.authenticate(headers)?.id).toBe('bob')
    expect(n8n.namesUser(new Headers({ cookie: 'n8n-auth=nobody' }))).toBe(true)
    expect(n8n.namesUser(new Headers({ authorization: 'Bearer bob' }))).toBe(false)
    const spec = createPreviewChatBackend({ dev: true })
    expect(spec.authenticate(new Headers(spec.credentials('bob')))?.id).toBe('bob')
  })

  it('left nothing unhandled', () => {
    expect(unhandled).toEqual([])
  })
})
