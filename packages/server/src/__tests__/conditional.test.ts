/**
 * The history read as a conditional request, as the released n8n 2.41 answers it (Express's
 * defaults, checked live on 2.41.1): a weak ETag that is a hash of the body, `304 Not Modified`
 * with no body to an `If-None-Match` naming it, the tag following the content mid-turn, and no
 * `Cache-Control`. Over real HTTP (the Node host), so that what the wire carries is what is tested.
 */
import { createHash } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import {
  authHeaders,
  chat,
  chatPath,
  closeHosts,
  createGate,
  manualTimers,
  send,
  startHost,
  turn,
  waitFor,
} from './harness'
import { n8nAuth, n8nTurn, startN8nHost } from './n8n-harness'

afterEach(closeHosts)

const historyOf = (threadId: string) => `${chatPath}/${threadId}/messages`

/** Express's default ETag of a body (the `etag` package, weak). */
const expressETag = (body: string) => {
  const bytes = Buffer.from(body)
  const hash = createHash('sha1').update(bytes).digest('base64').slice(0, 27)
  return `W/"${bytes.byteLength.toString(16)}-${hash}"`
}

describe('conditional history reads [R-SERVER-CONDITIONAL]', () => {
  it('a weak ETag of the body, no Cache-Control; If-None-Match with it answers 304 with no body', async () => {
    const server = await startHost()
    const reader = await turn(chat(server, { message: 'hi', sessionId: 'c1', newSession: true }))
    await reader.rest()
    const path = historyOf('c1')
    const first = await send(server, { path, headers: authHeaders('alice') })
    expect(first.status).toBe(200)
    const etag = first.headers.etag as string
    expect(etag).toBe(expressETag(first.body))
    expect(first.headers['cache-control']).toBeUndefined()

    const again = await send(server, {
      path,
      headers: { ...authHeaders('alice'), 'If-None-Match': etag },
    })
    expect(again.status).toBe(304)
    expect(again.body).toBe('')
    expect(again.headers.etag).toBe(etag)
    expect(again.headers['content-type']).toBeUndefined()
    expect(again.headers['content-length']).toBeUndefined()

    // Weak comparison, lists and `*`, as Express's `fresh`; another tag or `no-cache` reads in full.
    const status = async (headers: Record<string, string>) =>
      (await send(server, { path, headers: { ...authHeaders('alice'), ...headers } })).status
    expect(await status({ 'If-None-Match': etag.slice(2) })).toBe(304)
    expect(await status({ 'If-None-Match': `W/"other", ${etag}` })).toBe(304)
    expect(await status({ 'If-None-Match': '*' })).toBe(304)
    expect(await status({ 'If-None-Match': 'W/"other"' })).toBe(200)
    expect(await status({ 'If-None-Match': etag, 'Cache-Control': 'no-cache' })).toBe(200)
  })

  it('the tag follows the content mid-turn: 200, 304, 200 while running, 304, 200 at the end', async () => {
    // The agent moves only when the gate says, and a snapshot batch is recorded only when the clock
    // fires: each version of the record is made by the test, never by the machine's speed.
    const gate = createGate()
    const clock = manualTimers()
    const server = await startHost({ sleep: gate.sleep, timers: clock.timers })
    const reader = await turn(chat(server, { message: 'go', sessionId: 'c2', newSession: true }))
    await reader.next() // execution-started: recorded, no output yet
    const path = historyOf('c2')
    let etag = ''
    const read = async () => {
      const answer = await send(server, {
        path,
        headers: { ...authHeaders('alice'), ...(etag && { 'If-None-Match': etag }) },
      })
      if (answer.status === 200) etag = answer.headers.etag as string
      return answer.status
    }
    await waitFor(() => gate.paused === 1, 'the agent at its first pause')
    clock.fire() // records what the agent wrote before its first pause
    expect(await read()).toBe(200)
    expect(await read()).toBe(304)
    // A step of the agent writes more of the answer; until a batch records it, the record is as it was.
    const before = etag
    gate.step()
    await waitFor(() => gate.paused === 1, 'the agent at its next pause')
    expect(await read()).toBe(304)
    clock.fire()
    expect(await read()).toBe(200)
    expect(etag).not.toBe(before)
    expect(await read()).toBe(304)
    gate.open()
    await reader.rest()
    expect(await read()).toBe(200)
    expect(await read()).toBe(304)
  })

  it('the n8n-2.41 flavor answers alike [R-N8N-EMULATION]', async () => {
    const server = await startN8nHost()
    const reader = await n8nTurn(server, { message: 'hi', sessionId: 'c3' })
    await reader.rest()
    const path = historyOf('c3')
    const first = await send(server, { path, headers: n8nAuth() })
    expect(first.status).toBe(200)
    expect(first.headers.etag).toBe(expressETag(first.body))
    expect(first.headers['cache-control']).toBeUndefined()
    const again = await send(server, {
      path,
      headers: { ...n8nAuth(), 'If-None-Match': first.headers.etag as string },
    })
    expect(again).toMatchObject({ status: 304, body: '' })
  })
})
