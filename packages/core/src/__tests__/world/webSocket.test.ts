import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { webSocketWorld, type BrowserWebSocket } from './webSocket'

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
})
afterEach(() => {
  vi.useRealTimers()
})

/** Every event a socket fires, with its readyState at the time, through both the handlers and listeners. */
function record(socket: BrowserWebSocket) {
  const log: string[] = []
  const show = (event: Event) => {
    const close = event as Event & { code?: number; wasClean?: boolean; reason?: string }
    const message = event as Event & { data?: unknown }
    if (event.type === 'close') return `close ${close.code} ${close.wasClean} '${close.reason}'`
    if (event.type === 'message') return `message ${String(message.data)}`
    return event.type
  }
  socket.onopen = (event) => log.push(`${show(event)} @${socket.readyState}`)
  socket.onmessage = (event) => log.push(`${show(event)} @${socket.readyState}`)
  socket.onerror = (event) => log.push(`${show(event)} @${socket.readyState}`)
  socket.onclose = (event) => log.push(`${show(event)} @${socket.readyState}`)
  const listened: string[] = []
  for (const type of ['open', 'message', 'error', 'close'])
    socket.addEventListener(type, (event) => listened.push(event.type))
  return { log, listened }
}

describe('the WebSocket stand-in behaves as a browser does', () => {
  it('a refused handshake: error (an Event), then close 1006, never open; nothing at once', async () => {
    const world = webSocketWorld({ handshake: 'refuse' })
    const socket = new world.WebSocket('ws://x/rest/push')
    const { log, listened } = record(socket)
    expect([socket.readyState, log]).toEqual([0, []])
    await vi.advanceTimersByTimeAsync(5)
    expect(log).toEqual(['error @3', "close 1006 false '' @3"])
    expect(listened).toEqual(['error', 'close'])
    expect(world.open()).toEqual([])
  })

  it('an accepted one opens a task later, delivers frames, and a client close() ends it later with 1005', async () => {
    const world = webSocketWorld({ handshake: 'open', latencyMs: 0 })
    const socket = new world.WebSocket('ws://x/')
    const { log } = record(socket)
    expect(() => socket.send('early')).toThrow(
      expect.objectContaining({ name: 'InvalidStateError' }),
    )
    await vi.advanceTimersByTimeAsync(0)
    socket.serverSend('hello')
    expect(log).toEqual(['open @1'])
    await vi.advanceTimersByTimeAsync(0)
    socket.send('hi')
    socket.close()
    expect(socket.readyState).toBe(2)
    expect(log).toEqual(['open @1', 'message hello @1'])
    await vi.advanceTimersByTimeAsync(0)
    expect(log).toEqual(['open @1', 'message hello @1', "close 1005 true '' @3"])
    expect(socket.sent).toEqual(['hi'])
  })

  it('close(1000) keeps its code; close() while connecting fails the connection (error, 1006)', async () => {
    const world = webSocketWorld()
    const open = new world.WebSocket('ws://x/')
    const connecting = new world.WebSocket('ws://x/')
    const first = record(open)
    const second = record(connecting)
    open.acceptHandshake()
    await vi.advanceTimersByTimeAsync(5)
    open.close(1000, 'bye')
    connecting.close()
    await vi.advanceTimersByTimeAsync(0)
    expect(first.log).toEqual(['open @1', "close 1000 true 'bye' @3"])
    expect(second.log).toEqual(['error @3', "close 1006 false '' @3"])
  })

  it('refuses a URL that is not ws(s):// in the constructor, with a SyntaxError', () => {
    const world = webSocketWorld()
    expect(() => new world.WebSocket('http://x/')).toThrow(
      expect.objectContaining({ name: 'SyntaxError' }),
    )
    expect(world.sockets).toEqual([])
  })
})
