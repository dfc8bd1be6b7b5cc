import { describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import type { PreviewChatServer } from '../node/host'
import type { startHost } from './harness'
import {
  authHeaders,
  chat,
  chatPath,
  createGate,
  del,
  openPushSocket,
  post,
  readHistory,
  resume,
  send,
  stopPath,
  suspendedWithSecondHost,
  turn,
  waitFor,
} from './harness'

/**
 * One user's threads are theirs alone, and a scope decides what a user may do: one suite, run
 * against the development users (contract.test.ts) and against an app's own `authenticate`
 * (auth.test.ts), so the rule is pinned once for every way a backend knows its users.
 */
export interface PrivacySuiteOptions {
  /** Which authentication the suite runs under, for its title. */
  name: string
  /** Starts a host on the backend under test; the options are passed through. */
  start: (options?: Parameters<typeof startHost>[0]) => Promise<PreviewChatServer>
  /** A user with `agent:read` only. */
  reader: string
  /** A user with `agent:execute` only, where the backend has one: may not hear push. */
  executeOnly?: string
}

/** Whether a WebSocket push upgrade as `user` opens, or the status it is refused with. */
export function socketOutcome(server: PreviewChatServer, headers: Record<string, string>) {
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

/** The status an SSE push request with `headers` is answered with. */
export const ssePushStatus = async (server: PreviewChatServer, headers: Record<string, string>) =>
  (
    await send(server, {
      path: '/rest/push',
      headers: { Accept: 'text/event-stream', ...headers },
      untilFirstChunk: true,
    })
  ).status

export function describePrivacy({ name, start, reader, executeOnly }: PrivacySuiteOptions): void {
  describe(`7. a preview turn is private to its owner, ${name} [R-SERVER-PRIVATE]`, () => {
    it('answers 404 to another user for read, Stop, resume and run cancel, never announces it to them, and their own thread of that id is theirs', async () => {
      const server = await start()
      const bobTab = await openPushSocket(server, 'bob')
      const aliceTab = await openPushSocket(server, 'alice')
      const { suspended, gate, host } = await suspendedWithSecondHost(server, 't7s', start)
      const reader = await turn(
        chat(host, { message: 'private', sessionId: 't7', newSession: true }),
      )
      const { executionId } = await reader.until('execution-started')

      const read = await fetch(`${host.url}${chatPath}/t7/messages`, {
        headers: authHeaders('bob'),
      })
      expect(read.status).toBe(404)
      expect(await read.json()).toEqual({
        code: 'not_found',
        message: expect.any(String),
        hint: expect.any(String),
      })
      expect((await del(host, stopPath('t7', executionId), 'bob')).status).toBe(404)
      const { runId, toolCallId } = suspended.payload
      expect(
        (await resume(host, { runId, toolCallId, resumeData: { approved: true } }, 'bob')).status,
      ).toBe(404)
      expect((await del(host, `${chatPath}/runs/${runId}`, 'bob')).status).toBe(404)
      // Bob's own thread of the same id is his, and says nothing of Alice's.
      const bobsOwn = await post(
        host,
        chatPath,
        { message: 'mine', sessionId: 't7', newSession: true },
        'bob',
      )
      expect(bobsOwn.status).toBe(200)

      gate.open()
      await reader.rest()
      await bobsOwn.text()
      await waitFor(
        () => aliceTab.messages.some((m) => m.data.executionId === executionId),
        'alice to hear of it',
      )
      expect(bobTab.messages.some((m) => m.data.executionId === executionId)).toBe(false)
      expect((await readHistory(host, 't7')).activeExecutionId).toBeNull()
      bobTab.close()
      aliceTab.close()
    })

    it(`answers 403 to ${reader} (agent:read only) on POST and DELETE, and lets them hear push [R-SERVER-SCOPES]`, async () => {
      const gate = createGate()
      const server = await start({ sleep: gate.sleep })
      const running = await turn(
        chat(server, { message: 'hi', sessionId: 't7c', newSession: true }),
      )
      const { executionId } = await running.until('execution-started')

      const readerPost = await post(
        server,
        chatPath,
        { message: 'hi', sessionId: 'c1', newSession: true },
        reader,
      )
      expect(readerPost.status).toBe(403)
      expect(await readerPost.json()).toEqual({
        code: 'forbidden',
        message: expect.stringContaining('agent:execute'),
      })
      expect((await del(server, stopPath('t7c', executionId), reader)).status).toBe(403)
      expect(await ssePushStatus(server, authHeaders(reader))).toBe(200)
      expect(await socketOutcome(server, authHeaders(reader))).toBe('open')
      expect(server.backend.inspect.running()).toEqual([executionId])
      gate.open()
      await running.rest()
    })

    if (executeOnly)
      it(`answers 403 to ${executeOnly} (agent:execute only) on push, SSE and WebSocket [R-SERVER-PUSH-SCOPE]`, async () => {
        const server = await start()
        expect(await ssePushStatus(server, authHeaders(executeOnly))).toBe(403)
        expect(await socketOutcome(server, authHeaders(executeOnly))).toBe(403)
      })
  })
}
