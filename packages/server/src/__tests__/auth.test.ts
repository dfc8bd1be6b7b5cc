import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { scriptedAgent } from '../agent'
import { createPreviewChatBackend } from '../backend'
import { PreviewChatConfigError } from '../config-error'
import type { PreviewChatIdentity, Scope } from '../users'
import {
  authenticateBy,
  chatPath,
  closeHosts,
  collectUnhandled,
  send,
  startHost,
  stopPath,
} from './harness'
import { describePrivacy, socketOutcome, ssePushStatus } from './privacy.suite'

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
      expect(await ssePushStatus(server, headers)).toBe(401)
      expect(await socketOutcome(server, headers)).toBe(401)
    }
    expect(await server.backend.store.listThreads()).toEqual([])
  })
})

describePrivacy({
  name: "with the app's own authenticate",
  start: (options) => startApp(options),
  reader: 'carol',
  executeOnly: 'dave',
})
