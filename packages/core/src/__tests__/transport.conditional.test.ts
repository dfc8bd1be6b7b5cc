/**
 * Conditional history reads (issue 30): the transport keeps, per client and per thread, the last
 * snapshot it gave with its ETag, asks with `If-None-Match`, and takes a `304` as "the record held
 * is current": the same snapshot object back, nothing parsed or validated, so neither TanStack
 * Query nor the session sees anything new.
 */
import { describe, expect, it, vi } from 'vitest'
import { createTransport } from '../wire/transport'
import { conditionalServer, finishedTurn, key, readsOnlyClient, settle, snapshot } from './harness'

const timers = { setTimeout: () => 0, clearTimeout: () => {}, now: () => 0 }

const other = { ...key, threadId: 't2' }

describe('conditional history reads [R-READ-CONDITIONAL]', () => {
  it('sends the held ETag; a 304 gives back the same snapshot object, with nothing to parse', async () => {
    const server = conditionalServer()
    server.set('t1', snapshot(finishedTurn('e1', 'Q', 'A')))
    const transport = createTransport({
      baseUrl: '/rest',
      fetch: server.fetch,
      requestTimeoutMs: 1_000,
      timers,
    })
    const first = await transport.readHistory(key)
    expect(server.sent[0]?.ifNoneMatch).toBeNull()
    const parse = vi.spyOn(JSON, 'parse')
    try {
      const second = await transport.readHistory(key)
      expect(server.sent[1]?.ifNoneMatch).toBe('W/"t1-v1"')
      expect(second).toBe(first)
      expect(parse).not.toHaveBeenCalled()
    } finally {
      parse.mockRestore()
    }
    // Changed on the server: a 200 with the new record, whose unchanged messages keep their identity.
    server.set('t1', snapshot([...finishedTurn('e1', 'Q', 'A'), ...finishedTurn('e2', 'Q2', 'B')]))
    const third = await transport.readHistory(key)
    expect(third).not.toBe(first)
    expect(third.messages[0]).toBe(first.messages[0])
    expect(server.sent[2]?.ifNoneMatch).toBe('W/"t1-v1"')
    expect(await transport.readHistory(key)).toBe(third)
    expect(server.sent[3]?.ifNoneMatch).toBe('W/"t1-v2"')
  })

  it('a 304 stands for its own thread and its own client only', async () => {
    const server = conditionalServer()
    server.set('t1', snapshot(finishedTurn('e1', 'Q', 'A')))
    server.set('t2', snapshot(finishedTurn('e2', 'Other', 'B')))
    const transport = createTransport({
      baseUrl: '/rest',
      fetch: server.fetch,
      requestTimeoutMs: 1_000,
      timers,
    })
    const one = await transport.readHistory(key)
    const two = await transport.readHistory(other)
    expect(await transport.readHistory(key)).toBe(one)
    expect(await transport.readHistory(other)).toBe(two)
    expect(server.sent.map((s) => s.ifNoneMatch)).toEqual([null, null, 'W/"t1-v1"', 'W/"t2-v1"'])
    // Another client (another transport) holds nothing: it asks without a version.
    const second = createTransport({
      baseUrl: '/rest',
      fetch: server.fetch,
      requestTimeoutMs: 1_000,
      timers,
    })
    const fresh = await second.readHistory(key)
    expect(server.sent.at(-1)?.ifNoneMatch).toBeNull()
    expect(fresh).not.toBe(one)
    expect(fresh).toEqual(one)
  })

  it('a 304 gives the snapshot its If-None-Match named, even when another read answered meanwhile', async () => {
    const server = conditionalServer()
    server.set('t1', snapshot(finishedTurn('e1', 'Q', 'A')))
    const transport = createTransport({
      baseUrl: '/rest',
      fetch: server.fetch,
      requestTimeoutMs: 1_000,
      timers,
    })
    const first = await transport.readHistory(key)
    // Two reads at once (two query clients of one app): the first still in flight with v1's tag
    // when the second brings v2; the first's 304 stands for v1, what it asked about.
    let release = () => {}
    server.fetch.mockImplementationOnce(
      () =>
        new Promise<Response>((resolve) => {
          release = () =>
            resolve(new Response(null, { status: 304, headers: { etag: 'W/"t1-v1"' } }))
        }),
    )
    const slow = transport.readHistory(key)
    server.set('t1', snapshot([...finishedTurn('e1', 'Q', 'A'), ...finishedTurn('e2', 'Q2', 'B')]))
    const newer = await transport.readHistory(key)
    expect(newer.messages).toHaveLength(4)
    release()
    expect(await slow).toBe(first)
  })

  it('a 304 to a read that named no version is a typed error; the next read asks in full', async () => {
    const server = conditionalServer({ etags: false })
    server.set('t1', snapshot(finishedTurn('e1', 'Q', 'A')))
    const transport = createTransport({
      baseUrl: '/rest',
      fetch: server.fetch,
      requestTimeoutMs: 1_000,
      timers,
    })
    const first = await transport.readHistory(key)
    server.answer304(1)
    await expect(transport.readHistory(key)).rejects.toMatchObject({
      code: 'http_error',
      status: 304,
    })
    const again = await transport.readHistory(key)
    expect(server.sent.map((s) => s.ifNoneMatch)).toEqual([null, null, null])
    expect(again).toEqual(first)
  })

  it('without ETags, a body equal to the one held gives back the same snapshot', async () => {
    const server = conditionalServer({ etags: false })
    server.set('t1', snapshot(finishedTurn('e1', 'Q', 'A')))
    const transport = createTransport({
      baseUrl: '/rest',
      fetch: server.fetch,
      requestTimeoutMs: 1_000,
      timers,
    })
    const first = await transport.readHistory(key)
    expect(await transport.readHistory(key)).toBe(first)
    expect(server.sent.every((s) => s.ifNoneMatch === null)).toBe(true)
  })

  it('a session whose read answers 304 keeps its snapshot and messages (only lastSyncedAt moves); a bogus 304 loses nothing', async () => {
    const server = conditionalServer()
    server.set('t1', snapshot(finishedTurn('e1', 'Q', 'A')))
    const client = readsOnlyClient(server.fetch)
    const session = client.session(key)
    const changes: unknown[] = []
    const stop = session.subscribe((state) => changes.push(state))
    await settle()
    const loaded = session.getState()
    expect(loaded).toMatchObject({ status: 'idle', loaded: true })
    const cached = client.queryClient.getQueryData(client.queryKey(key))
    const seen = changes.length
    await session.refresh()
    expect(server.sent.at(-1)?.ifNoneMatch).toBe('W/"t1-v1"')
    expect(client.queryClient.getQueryData(client.queryKey(key))).toBe(cached)
    // What changes is when the record was last confirmed, nothing of the transcript: the same
    // messages array, so a memoised message list renders nothing again.
    const after = session.getState()
    expect(after.messages).toBe(loaded.messages)
    expect({ ...after, lastSyncedAt: 0 }).toEqual({ ...loaded, lastSyncedAt: 0 })
    expect(after.lastSyncedAt).toBeGreaterThanOrEqual(loaded.lastSyncedAt ?? 0)
    expect(changes.length).toBeLessThanOrEqual(seen + 1)
    stop()
    session.dispose()
    // A 304 to a client that holds nothing (a server's or a proxy's error), while the cache shows
    // the transcript: a read error, the transcript stays, and the next read asks in full.
    server.answer304(1)
    const before = server.sent.length
    const fresh = readsOnlyClient(server.fetch, { queryClient: client.queryClient })
    const again = fresh.session(key)
    const stopAgain = again.subscribe(() => {})
    await settle()
    expect(server.sent.length).toBe(before + 1)
    expect(again.getState().readError).toMatchObject({ code: 'http_error', status: 304 })
    expect(again.getState().messages.map((m) => m.id)).toEqual(loaded.messages.map((m) => m.id))
    await again.refresh()
    expect(again.getState().readError).toBeNull()
    expect(server.sent.at(-1)?.ifNoneMatch).toBeNull()
    stopAgain()
    again.dispose()
  })
})
