/**
 * Client message ids on the spec flavor, which dedupes as the platform's source does
 * (`shared/interop/next-era.md`, "Client message ids"), and on the n8n-2.41 flavor, which does
 * not (the released platform has none of it). Time is the gate's.
 */
import { capabilitiesHeader, parseCapabilities } from '@preview-chat/core/contract'
import { afterEach, describe, expect, it } from 'vitest'
import {
  chat,
  closeHosts,
  collectUnhandled,
  createGate,
  post,
  readHistory,
  startHost,
  turn,
  waitFor,
} from './harness'
import { n8nMessages, n8nTurn, startN8nHost } from './n8n-harness'

const unhandled = collectUnhandled()
afterEach(closeHosts)

const chatPath = '/rest/projects/p1/agents/v2/a1/chat'

const dedupeChat = (
  server: Awaited<ReturnType<typeof startHost>>,
  body: { message: string; sessionId: string; newSession?: true; messageId: string },
) => turn(post(server, chatPath, body))

describe('the spec flavor dedupes a client messageId [R-SERVER-DEDUPE]', () => {
  it('a retried POST (same messageId, same client-minted sessionId) is answered with done alone and recorded once', async () => {
    const server = await startHost()
    const ids = { sessionId: crypto.randomUUID(), messageId: crypto.randomUUID() }
    const first = await dedupeChat(server, { message: 'hello', newSession: true, ...ids })
    expect(parseCapabilities(first.response.headers.get(capabilitiesHeader))).toEqual({
      dedupesMessages: true,
      queuesMessages: false,
    })
    const started = await first.until('execution-started')
    expect(started).toEqual({
      type: 'execution-started',
      executionId: expect.any(String),
      sessionId: ids.sessionId,
    })
    await first.rest()
    const retry = await dedupeChat(server, { message: 'hello', newSession: true, ...ids })
    expect(await retry.rest()).toEqual([{ type: 'done' }])
    const history = await readHistory(server, ids.sessionId)
    expect(history.messages).toHaveLength(2)
    expect(history.messages[0]).toMatchObject({
      id: `${started.executionId}:user`,
      messageId: ids.messageId,
    })
  })

  it('a retry while the first is still running is a duplicate too, not a competing turn', async () => {
    const gate = createGate()
    const server = await startHost({ sleep: gate.sleep, snapshotMs: 60_000 })
    const ids = { sessionId: crypto.randomUUID(), messageId: crypto.randomUUID() }
    const first = await dedupeChat(server, { message: '/long 2', newSession: true, ...ids })
    await first.until('execution-started')
    const retry = await dedupeChat(server, { message: '/long 2', ...ids })
    expect(await retry.rest()).toEqual([{ type: 'done' }])
    gate.open()
    await first.rest()
  })

  it('a refused POST does not use its messageId up: sent again once the thread is free, it runs', async () => {
    const gate = createGate()
    const server = await startHost({ sleep: gate.sleep, snapshotMs: 60_000 })
    const sessionId = crypto.randomUUID()
    const running = await turn(chat(server, { message: '/long 2', sessionId, newSession: true }))
    await running.until('execution-started')
    const messageId = crypto.randomUUID()
    const refused = await dedupeChat(server, { message: 'second', sessionId, messageId })
    expect(await refused.rest()).toEqual([
      expect.objectContaining({ type: 'error', errorCode: 'turn_already_running' }),
    ])
    gate.open()
    await running.rest()
    const again = await dedupeChat(server, { message: 'second', sessionId, messageId })
    expect((await again.rest())[0]?.type).toBe('execution-started')
  })

  it('without a messageId nothing is deduped; a messageId that is no UUID, or comes without a sessionId, is a 400', async () => {
    const server = await startHost()
    const sessionId = crypto.randomUUID()
    await (await turn(chat(server, { message: 'same', sessionId, newSession: true }))).rest()
    await (await turn(chat(server, { message: 'same', sessionId }))).rest()
    expect((await readHistory(server, sessionId)).messages).toHaveLength(4)
    const bad = await post(server, chatPath, { message: 'x', sessionId, messageId: 'not-a-uuid' })
    expect(bad.status).toBe(400)
    const alone = await post(server, chatPath, { message: 'x', messageId: crypto.randomUUID() })
    expect(alone.status).toBe(400)
    expect(unhandled).toEqual([])
  })
})

describe('the n8n-2.41 flavor does not dedupe [R-N8N-NO-DEDUPE]', () => {
  it('announces no capability, and two POSTs of one messageId are two turns', async () => {
    const server = await startN8nHost()
    const sessionId = crypto.randomUUID()
    const messageId = crypto.randomUUID()
    const first = await n8nTurn(server, { message: 'hello', sessionId, messageId })
    expect(first.response.headers.get(capabilitiesHeader)).toBeNull()
    await first.rest()
    const second = await n8nTurn(server, { message: 'hello', sessionId, messageId })
    expect((await second.rest()).at(-1)?.type).toBe('done')
    const messages = await waitFor(async () => {
      const read = await n8nMessages(server, sessionId)
      return read.length === 4 && read
    }, 'both turns recorded')
    expect(messages.every((message) => !('messageId' in message))).toBe(true)
  })
})
