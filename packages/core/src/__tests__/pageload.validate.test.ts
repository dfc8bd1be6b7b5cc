/**
 * Issue 30: a page load validates the thread's record once. A transcript kept across the reload
 * (`persistTranscripts()`) is checked when it is restored; the first read's answer, which repeats
 * it, takes those checked messages again (same objects) instead of validating each one a second
 * time. The query clients here share no structure (`structuralSharing: false`), so what the cache
 * holds is what the transport gave: the identity of a message says whether it was validated anew.
 */
import { QueryClient } from '@tanstack/query-core'
import { describe, expect, it, vi } from 'vitest'
import type { DraftStorage } from '../index'
import { persistTranscripts } from '../persist'
import { createTransport } from '../wire/transport'
import {
  finishedTurn,
  key,
  memoryStorage,
  settle,
  setup,
  snapshot,
  useFakeTimersInEachTest,
} from './harness'

useFakeTimersInEachTest()

const unshared = () =>
  new QueryClient({ defaultOptions: { queries: { structuralSharing: false } } })
const page = (storage: DraftStorage) =>
  setup({ scope: 'alice', queryClient: unshared(), persist: persistTranscripts({ storage }) })

const record = [...finishedTurn('e1', 'Q', 'A'), ...finishedTurn('e2', 'Q2', 'B')]

async function kept() {
  const storage = memoryStorage()
  const before = page(storage)
  before.server.answerRead(snapshot(record))
  await settle()
  await vi.advanceTimersByTimeAsync(1_000) // the throttled write
  before.session.dispose()
  return storage
}

describe('a page load validates the record once [R-PERSIST-RELOAD]', () => {
  it('the first read after a reload takes the kept messages it repeats, validated at restore', async () => {
    const storage = await kept()
    const after = page(storage)
    const restored = after.session.getState().messages
    expect(restored).toHaveLength(4)
    expect(after.session.getState().status).toBe('recovering')
    // The record changed in one message while the page was away: only that one is new.
    const changed = [...record.slice(0, 3), ...finishedTurn('e2', 'Q2', 'B, corrected').slice(1)]
    after.server.answerRead(snapshot(changed))
    await settle()
    const read = after.session.getState()
    expect(read.status).toBe('idle')
    expect(read.messages.slice(0, 3)).toEqual(restored.slice(0, 3))
    for (let i = 0; i < 3; i++) expect(read.messages[i]).toBe(restored[i])
    expect(read.messages[3]).not.toBe(restored[3])
    expect(read.messages[3]?.content).toEqual([{ type: 'text', text: 'B, corrected' }])
    after.session.dispose()
  })

  it('a held message is only a hint: an answer that breaks the contract is still rejected', async () => {
    const transport = createTransport({
      baseUrl: '/rest',
      requestTimeoutMs: 1_000,
      timers: { setTimeout: () => 0, clearTimeout: () => {}, now: () => 0 },
      fetch: async () =>
        Response.json({
          data: {
            ...snapshot(record),
            messages: [...record.slice(0, 3), { id: 'x', role: 'bot' }],
          },
        }),
    })
    const held = snapshot(record)
    await expect(transport.readHistory(key, undefined, held)).rejects.toMatchObject({
      code: 'invalid_response',
    })
    const good = createTransport({
      baseUrl: '/rest',
      requestTimeoutMs: 1_000,
      timers: { setTimeout: () => 0, clearTimeout: () => {}, now: () => 0 },
      fetch: async () => Response.json({ data: snapshot(record) }),
    })
    const read = await good.readHistory(key, undefined, held)
    expect(read.messages).toEqual(held.messages)
    read.messages.forEach((message, i) => expect(message).toBe(held.messages[i]))
  })
})
