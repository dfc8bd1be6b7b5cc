import { createServer, type ServerResponse } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { PreviewChatAgent } from '../agent'
import { createPreviewChatBackend, type PreviewChatBackend } from '../backend'
import type { Sleep } from '../sleep'
import { writeFetchResponse } from '../node/request'
import { createSseStream, sseResponse, turnQueueLimitBytes } from '../sse'
import { authHeaders, chatPath, closeHosts, collectUnhandled, startHost, waitFor } from './harness'

// Issue 27, row k: 20 connections each posting `/long 100000` and never reading made the server
// hold every turn's whole stream (turn streams had no bound; push streams did). A reader that
// leaves more than turnQueueLimitBytes unread is now dropped, as a slow push reader is; the turn
// goes on and is recorded, since it survives its connection. Counts, not clocks: the agent's every
// pause samples what the streams hold, and runs on at once.
const unhandled = collectUnhandled()
afterEach(async () => {
  await closeHosts()
  expect(unhandled).toEqual([])
})

/** `/long` deltas whose stream is well past the bound (each event is about 90 bytes). */
const deltas = 20_000

/**
 * No snapshot while the turn runs, only the end's recording: each snapshot writes the whole turn so
 * far, and at a few milliseconds apart those writes, not the streams, would be what these tests time.
 */
const recordAtTheEnd = 600_000

interface Samples {
  /** The most any running turn's stream held unread, over every pause of every agent. */
  maxUnread: number
  /** Pauses at which a turn ran on with no reader left. */
  ranUnheard: number
}

/** A sleep that samples the backend's turn streams at every pause, then yields only. */
function samplingSleep(backend: () => PreviewChatBackend, samples: Samples): Sleep {
  return (_ms, signal) => {
    const { inspect } = backend()
    for (const id of inspect.running()) {
      samples.maxUnread = Math.max(samples.maxUnread, inspect.unreadBytes(id) ?? 0)
      if (!inspect.hasListener(id)) samples.ranUnheard++
    }
    return new Promise((resolve, reject) =>
      setImmediate(() => (signal.aborted ? reject(signal.reason as Error) : resolve())),
    )
  }
}

function post(backend: PreviewChatBackend, sessionId: string): Promise<Response> {
  return backend.fetch(
    new Request(`http://x${chatPath}`, {
      method: 'POST',
      headers: { ...authHeaders('alice'), 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: `/long ${deltas}`, sessionId, newSession: true }),
    }),
  )
}

/** The executions, once `count` of them ran and none runs any more. */
const ended = (backend: PreviewChatBackend, count: number) =>
  waitFor(
    () => {
      const executions = backend.inspect.executions()
      const done = executions.length === count && backend.inspect.running().length === 0
      return done && executions
    },
    'the turns to end',
    30_000,
  )

describe('a turn stream whose client does not read is dropped; the turn goes on [R-SERVER-TURN-SLOW]', () => {
  it('holds at most turnQueueLimitBytes unread, errors the stream, and records the whole turn', async () => {
    const samples: Samples = { maxUnread: 0, ranUnheard: 0 }
    const backend: PreviewChatBackend = createPreviewChatBackend({
      dev: true,
      snapshotMs: recordAtTheEnd,
      sleep: samplingSleep(() => backend, samples),
    })
    // Three clients that never read their stream.
    const responses = await Promise.all(['t1', 't2', 't3'].map((id) => post(backend, id)))
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200])
    const executions = await ended(backend, 3)
    // The streams filled up to the bound (the bytes written were well past it), never over it.
    expect(samples.maxUnread).toBeGreaterThan(turnQueueLimitBytes * 0.95)
    expect(samples.maxUnread).toBeLessThanOrEqual(turnQueueLimitBytes)
    expect(samples.ranUnheard).toBeGreaterThan(0)
    for (const response of responses) {
      await expect(response.body!.getReader().read()).rejects.toThrow(/unread/)
    }
    expect(executions.map((execution) => execution.status)).toEqual([
      'success',
      'success',
      'success',
    ])
    for (const id of ['t1', 't2', 't3']) {
      const assistant = backend.inspect.history(id)!.messages.at(-1)!
      const text = assistant.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
      expect(text.endsWith(`delta ${deltas}. `)).toBe(true)
    }
    await backend.close()
  }, 60_000)

  it('keeps a reader that keeps up: the bound is on what waits unread, not on the turn', async () => {
    const samples: Samples = { maxUnread: 0, ranUnheard: 0 }
    const backend: PreviewChatBackend = createPreviewChatBackend({
      dev: true,
      snapshotMs: recordAtTheEnd,
      sleep: samplingSleep(() => backend, samples),
    })
    const response = await post(backend, 't1')
    const text = await response.text()
    expect(text).toContain('"type":"done"')
    expect(new TextEncoder().encode(text).byteLength).toBeGreaterThan(turnQueueLimitBytes)
    expect(samples.ranUnheard).toBe(0)
    await backend.close()
  }, 60_000)

  it('drops the connection of a client that stops reading (over the Node host)', async () => {
    // The kernel holds what a client does not read before the stream does (its receive buffer
    // grows up to net.ipv4.tcp_rmem's maximum, 32 MiB on some machines, plus the server's send
    // buffer), so no fixed number of deltas is enough on every machine. The agent streams until
    // nobody reads its turn any more, then a few deltas more, which must still be recorded.
    const samples: Samples = { maxUnread: 0, ranUnheard: 0 }
    const chunk = 'x'.repeat(16 * 1024)
    const after = 8
    const ceiling = (128 * 1024 * 1024) / chunk.length
    let sent = 0
    const untilUnheard: PreviewChatAgent = async (_input, context) => {
      context.emit({ type: 'start-step' })
      const id = context.id('text')
      context.emit({ type: 'text-start', id })
      let unheard = 0
      while (unheard < after && sent < ceiling) {
        await context.pause()
        context.emit({ type: 'text-delta', id, delta: chunk })
        sent++
        const { inspect } = server.backend
        if (inspect.running().some((running) => !inspect.hasListener(running))) unheard++
      }
      context.emit({ type: 'text-delta', id, delta: 'the end' })
      context.emit({ type: 'text-end', id })
      context.emit({ type: 'finish-step' })
      return { kind: 'done' }
    }
    const server = await startHost({
      agent: untilUnheard,
      snapshotMs: recordAtTheEnd,
      sleep: samplingSleep(() => server.backend, samples),
    })
    const body = JSON.stringify({ message: 'stream', sessionId: 't1', newSession: true })
    const socket = connect(server.port, '127.0.0.1')
    socket.on('error', () => undefined)
    let received = ''
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    socket.write(
      `POST ${chatPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer alice\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    )
    socket.once('data', (first: Buffer) => {
      received += first.toString('latin1')
      // The client stops reading: what the server writes piles up, in the kernel, then the stream.
      socket.pause()
    })
    const [execution] = await ended(server.backend, 1)
    expect(sent).toBeLessThan(ceiling)
    expect(execution?.status).toBe('success')
    expect(samples.maxUnread).toBeGreaterThan(0)
    expect(samples.maxUnread).toBeLessThanOrEqual(turnQueueLimitBytes)
    expect(samples.ranUnheard).toBeGreaterThan(0)
    // The turn went on without its reader, to its last delta, and was recorded whole.
    const text = server.backend.inspect
      .history('t1')!
      .messages.at(-1)!
      .content.map((part) => (part.type === 'text' ? part.text : ''))
      .join('')
    expect(text.length).toBe(sent * chunk.length + 'the end'.length)
    // What reached the client is a cut stream: no terminal event, then the connection closed.
    socket.on('data', (chunk: Buffer) => void (received += chunk.toString('latin1')))
    socket.resume()
    await closed
    expect(received).toMatch(/^HTTP\/1\.1 200 /)
    expect(received).toContain('"type":"execution-started"')
    expect(received).not.toContain('"type":"done"')
    expect(received).not.toContain('the end')
  }, 60_000)

  it('closes the connection the moment the stream is dropped, while the client still does not read', async () => {
    // The host waits for a peer that does not read to drain what was written; the dropped body
    // must end that wait (and the connection), not leave both open until the peer reads again.
    const stream = createSseStream({ maxQueuedBytes: turnQueueLimitBytes })
    let answered: ServerResponse | undefined
    const http = createServer((_req, res) => {
      answered = res
      void writeFetchResponse(sseResponse(stream), res)
    })
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    const socket = connect((http.address() as AddressInfo).port, '127.0.0.1')
    socket.on('error', () => undefined)
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    await new Promise((resolve) => socket.once('data', resolve))
    socket.pause()
    const event = { type: 'text-delta', id: 'x', delta: 'd'.repeat(16 * 1024) }
    let written = 0
    while (!stream.dropped) {
      stream.send(event)
      written += event.delta.length
      // Let the host write what it can to the socket, and wait on the peer.
      await new Promise((resolve) => setImmediate(resolve))
      expect(written).toBeLessThan(64 * turnQueueLimitBytes)
    }
    // A few turns of the event loop, not a clock: the drop closes the connection at once.
    for (let turns = 0; turns < 20 && !answered!.destroyed; turns++) {
      await new Promise((resolve) => setImmediate(resolve))
    }
    expect(answered!.destroyed).toBe(true)
    socket.destroy()
    await new Promise((resolve) => http.close(resolve))
  })

  it('counts as the client leaving in the n8n-2.41 flavor, whose turn then ends cancelled', async () => {
    const samples: Samples = { maxUnread: 0, ranUnheard: 0 }
    const backend: PreviewChatBackend = createPreviewChatBackend({
      dev: true,
      flavor: 'n8n-2.41',
      snapshotMs: recordAtTheEnd,
      sleep: samplingSleep(() => backend, samples),
    })
    const response = await backend.fetch(
      new Request(`http://x${chatPath}`, {
        method: 'POST',
        headers: { ...backend.credentials('alice'), 'Content-Type': 'application/json' },
        body: JSON.stringify({ message: `/long ${deltas}`, sessionId: 't1' }),
      }),
    )
    expect(response.status).toBe(200)
    const [execution] = await ended(backend, 1)
    expect(execution?.status).toBe('cancelled')
    expect(samples.maxUnread).toBeLessThanOrEqual(turnQueueLimitBytes)
    await backend.close()
  }, 60_000)
})
