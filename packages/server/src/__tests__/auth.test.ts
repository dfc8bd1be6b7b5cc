import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { scriptedAgent } from '../agent'
import { createPreviewChatBackend } from '../backend'
import { PreviewChatConfigError } from '../config-error'
import type { PreviewChatServer } from '../node/host'
import type { PreviewChatIdentity, Scope } from '../users'
import {
  authenticateBy,
  chat,
  chatPath,
  closeHosts,
  collectUnhandled,
  createGate,
  del,
  openPushSocket,
  post,
  readHistory,
  resume,
  send,
  startHost,
  stopPath,
  turn,
  waitFor,
} from './harness'

// The app's own auth: a header names the user (an app would read a session cookie or a JWT).
const people: Record<string, readonly Scope[]> = {
  alice: ['agent:read', 'agent:execute'],
  bob: ['agent:read', 'agent:execute'],
  carol: ['agent:read'],
  dave: ['agent:execute'],
}
async function authenticate(request: Request): Promise<PreviewChatIdentity | null> {
  await Promise.resolve()
  const name = request.headers.get('x-test-user')
  if (name === 'thrower') throw new Error('the session store is down')
  if (name === 'junk') return { userId: 42 } as unknown as PreviewChatIdentity
  const scopes = name === null ? undefined : people[name]
  return name !== null && scopes ? { userId: name, scopes } : null
}

const unhandled = collectUnhandled()
beforeAll(() => authenticateBy((user) => ({ 'X-Test-User': user })))
afterAll(() => authenticateBy())
afterEach(async () => {
  await closeHosts()
  expect(unhandled).toEqual([])
})

const startApp = (options: Parameters<typeof startHost>[0] = {}) =>
  startHost({ dev: false, authenticate, agent: scriptedAgent, ...options })

/** Whether a WebSocket push upgrade with `headers` opens, or the status it is refused with. */
function socketOutcome(server: PreviewChatServer, headers: Record<string, string>) {
  const socket = new WebSocket(`${server.url.replace('http', 'ws')}/rest/push`, { headers })
  return new Promise<number | 'open'>((resolve) => {
    socket.once('open', () => {
      socket.close()
      resolve('open')
    })
    socket.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0)
      socket.terminate()
    })
    socket.once('error', () => undefined)
  })
}

const sse = async (server: PreviewChatServer, headers: Record<string, string>) =>
  (
    await send(server, {
      path: '/rest/push',
      headers: { Accept: 'text/event-stream', ...headers },
      untilFirstChunk: true,
    })
  ).status

describe('authenticate decides every route, push included [R-SERVER-AUTH]', () => {
  it('refuses to start without authenticate (unless dev: true), or without an agent', () => {
    const refused = (options: Parameters<typeof createPreviewChatBackend>[0]) => {
      try {
        createPreviewChatBackend(options)
      } catch (error) {
        return PreviewChatConfigError.isInstance(error) ? error.code : 'other'
      }
      return 'started'
    }
    expect(refused({})).toBe('no_authenticate')
    expect(refused({ agent: scriptedAgent })).toBe('no_authenticate')
    expect(refused({ authenticate })).toBe('no_agent')
    expect(refused({ authenticate, agent: scriptedAgent })).toBe('started')
    expect(refused({ dev: true })).toBe('started')
  })

  it('answers 401 with nothing beyond the code to no user, an unknown one, a development credential, a throwing or a junk authenticate', async () => {
    const server = await startApp()
    const refusals: Record<string, string>[] = [
      {},
      { 'X-Test-User': 'mallory' },
      { Authorization: 'Bearer alice' },
      { Cookie: 'preview-chat-user=alice' },
      { 'X-Test-User': 'thrower' },
      { 'X-Test-User': 'junk' },
    ]
    for (const headers of refusals) {
      const answers = [
        await send(server, {
          method: 'POST',
          path: chatPath,
          headers: { 'Content-Type': 'application/json', ...headers },
          body: JSON.stringify({ message: 'hi', sessionId: 't1', newSession: true }),
        }),
        await send(server, { path: `${chatPath}/t1/messages`, headers }),
        await send(server, { method: 'DELETE', path: stopPath('t1', 'e1'), headers }),
        await send(server, { method: 'DELETE', path: `${chatPath}/runs/r1`, headers }),
      ]
      for (const answer of answers) {
        expect(answer.status, JSON.stringify(headers)).toBe(401)
        expect(JSON.parse(answer.body)).toEqual({
          code: 'unauthorized',
          message: 'Not authenticated.',
        })
      }
      expect(await sse(server, headers)).toBe(401)
      expect(await socketOutcome(server, headers)).toBe(401)
    }
    expect(await server.backend.store.listThreads()).toEqual([])
  })

  it('answers 403 to a user without the scope: carol may only read, dave may not hear push [R-SERVER-SCOPES R-SERVER-PUSH-SCOPE]', async () => {
    const gate = createGate()
    const server = await startApp({ sleep: gate.sleep })
    const reader = await turn(chat(server, { message: 'hi', sessionId: 't7c', newSession: true }))
    const { executionId } = await reader.until('execution-started')
    const carolPost = await post(
      server,
      chatPath,
      { message: 'hi', sessionId: 'c1', newSession: true },
      'carol',
    )
    expect(carolPost.status).toBe(403)
    expect((await del(server, stopPath('t7c', executionId), 'carol')).status).toBe(403)
    expect(await sse(server, { 'X-Test-User': 'dave' })).toBe(403)
    expect(await socketOutcome(server, { 'X-Test-User': 'dave' })).toBe(403)
    expect(await sse(server, { 'X-Test-User': 'carol' })).toBe(200)
    expect(await socketOutcome(server, { 'X-Test-User': 'carol' })).toBe('open')
    expect(server.backend.inspect.running()).toEqual([executionId])
    gate.open()
    await reader.rest()
  })

  it("one user can never read, stop, resume or be told of another's thread [R-SERVER-PRIVATE]", async () => {
    const server = await startApp()
    const bobTab = await openPushSocket(server, 'bob')
    const aliceTab = await openPushSocket(server, 'alice')
    const suspended = await (
      await turn(chat(server, { message: '/suspend', sessionId: 't7s', newSession: true }))
    ).until('tool-call-suspended')
    const gate = createGate()
    const host = await startApp({
      sleep: gate.sleep,
      store: server.backend.store,
      bus: server.backend.bus,
    })
    const reader = await turn(chat(host, { message: 'private', sessionId: 't7', newSession: true }))
    const { executionId } = await reader.until('execution-started')

    expect(
      (await send(host, { path: `${chatPath}/t7/messages`, headers: { 'X-Test-User': 'bob' } }))
        .status,
    ).toBe(404)
    expect((await del(host, stopPath('t7', executionId), 'bob')).status).toBe(404)
    const { runId, toolCallId } = suspended.payload
    expect(
      (await resume(host, { runId, toolCallId, resumeData: { approved: true } }, 'bob')).status,
    ).toBe(404)
    expect((await del(host, `${chatPath}/runs/${runId}`, 'bob')).status).toBe(404)
    // Bob's own thread of the same id is his, and says nothing of Alice's.
    expect(
      (await post(host, chatPath, { message: 'mine', sessionId: 't7', newSession: true }, 'bob'))
        .status,
    ).toBe(200)

    gate.open()
    await reader.rest()
    await waitFor(
      () => aliceTab.messages.some((m) => m.data.executionId === executionId),
      'alice to hear of it',
    )
    expect(bobTab.messages.some((m) => m.data.executionId === executionId)).toBe(false)
    expect((await readHistory(host, 't7')).activeExecutionId).toBeNull()
    bobTab.close()
    aliceTab.close()
  })
})
