import './websocket-placeholder'
import { describe, expect, it } from 'vitest'
import { setupPreviewChatServer } from '../vitest'

const chat = setupPreviewChatServer({
  flavor: 'n8n-2.41',
  pushBackend: 'websocket',
  deltaMs: 0,
  snapshotMs: 5,
  user: 'alice',
})

const base = 'http://localhost/rest'

describe("the backend's flavor, passed through [R-MSW-FLAVOR]", () => {
  it("mounts the n8n-2.41 flavor: seeded threads read in n8n's shape, with its auth and errors", async () => {
    expect(chat.mock.backend.flavor).toBe('n8n-2.41')
    const { key, executionId } = await chat.mock.seed.thread({ messages: ['Hello'] })
    expect(executionId).toMatch(/^[A-Za-z0-9]{16}$/)
    const chatUrl = `${base}/projects/${key.projectId}/agents/v2/${key.agentId}/chat`

    // No credentials: the mock's user, as n8n's cookie and a browser-id.
    const read = await fetch(`${chatUrl}/${key.threadId}/messages`)
    expect(read.status).toBe(200)
    const { data } = (await read.json()) as {
      data: { messages: Record<string, unknown>[]; openSuspensions: unknown[] }
    }
    expect(Object.keys(data)).toEqual(['messages', 'openSuspensions'])
    expect(data.messages.map((message) => [message.id, message.executionStatus])).toEqual([
      [`${executionId}:user`, undefined],
      [`${executionId}:assistant`, 'success'],
    ])
    expect(Object.keys(data.messages[0]!)).toEqual([
      'id',
      'role',
      'content',
      'executionId',
      'createdAt',
    ])

    const unknown = await fetch(`${chatUrl}/nope/messages`)
    expect(await unknown.json()).toMatchObject({ code: 404, message: 'Thread "nope" not found' })
    const stranger = await fetch(`${chatUrl}/${key.threadId}/messages`, {
      headers: { cookie: 'n8n-auth=mallory', 'browser-id': 'b' },
    })
    expect([stranger.status, await stranger.json()]).toEqual([
      401,
      { status: 'error', message: 'Unauthorized' },
    ])
    const stop = await fetch(`${chatUrl}/${key.threadId}/executions/${executionId}`, {
      method: 'DELETE',
    })
    expect([stop.status, stop.headers.get('content-type')]).toEqual([
      404,
      'text/html; charset=utf-8',
    ])
    const push = await fetch(`${base}/push`)
    expect(push.status).toBe(500)

    // A turn posted by the test: no execution-started; a held seeded turn reads as n8n's mid-turn.
    const turn = await fetch(chatUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: '/words 2', sessionId: key.threadId }),
    })
    expect(await turn.text()).toMatch(/^:ok\n\ndata: \{"type":"start-step"\}/)
    const running = await chat.mock.seed.runningTurn()
    const midTurn = await fetch(
      `${base}/projects/${running.key.projectId}/agents/v2/${running.key.agentId}/chat/${running.key.threadId}/messages`,
    )
    const mid = (await midTurn.json()) as { data: Record<string, unknown> }
    expect(mid.data).not.toHaveProperty('activeExecutionId')
    running.turn.release()
  })

  it('a cut stream cancels the turn, as closing it does on n8n', async () => {
    const turn = chat.mock.holdTurns()
    const cut = chat.mock.cutNextStream({ afterEvents: 2 })
    const response = await fetch(`${base}/projects/p/agents/v2/a/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: '/words 5', sessionId: 'cut' }),
    })
    await cut
    await expect.poll(() => chat.mock.backend.inspect.executions()[0]?.status).toBe('cancelled')
    const events = (await response.text()).split('\n\n').filter(Boolean)
    expect(events.slice(0, 2)).toEqual([':ok', 'data: {"type":"start-step"}'])
    expect(events).toHaveLength(3)
    turn.release()
  })

  it("serves n8n's WebSocket push with pushBackend 'websocket', only with ?pushRef=", async () => {
    const open = (query: string) => {
      const socket = new WebSocket(`ws://localhost/rest/push${query}`)
      const messages: string[] = []
      socket.addEventListener('message', (event) => messages.push(String(event.data)))
      const closed = new Promise<number>((resolve) =>
        socket.addEventListener('close', (event) => resolve(event.code)),
      )
      return { socket, messages, closed }
    }
    const refused = open('')
    expect(await refused.closed).toBe(1005)

    const tab = open('?pushRef=tab-1')
    await new Promise((resolve) => tab.socket.addEventListener('open', resolve))
    const { executionId } = await chat.mock.seed.thread()
    await expect
      .poll(() => tab.messages.map((text) => JSON.parse(text).data.executionId))
      .toContain(executionId)
    tab.socket.close()
    // The SSE push is not served by a WebSocket backend.
    const sse = await fetch(`${base}/push?pushRef=x`)
    expect([sse.status, await sse.text()]).toEqual([401, 'Unauthorized'])
  })
})
