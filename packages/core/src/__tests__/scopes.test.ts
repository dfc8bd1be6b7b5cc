/**
 * Scopes that cannot mix (issue 27, row a): an app with one `QueryClient` at its root and one
 * preview-chat client per signed-in user. Nothing of one user's transcript is ever shown, stored
 * or restored under another's scope — in memory (the query cache) or in storage (`persist`).
 */
import { QueryClient } from '@tanstack/query-core'
import { describe, expect, it, vi } from 'vitest'
import { historyQueryKey } from '../index'
import { persistTranscripts } from '../persist'
import { finishedTurn, key, settle, setup, snapshot, useFakeTimersInEachTest } from './harness'
import { storageOrigin } from './world/storage'

useFakeTimersInEachTest()

const texts = (state: { messages: { content: { type: string; text?: string }[] }[] }) =>
  state.messages.map((m) => m.content.map((p) => p.text ?? '').join(''))

describe('scopes that cannot mix [R-SCOPE-SEPARATE]', () => {
  it('the cache key carries the scope: bob, on the query client alice used, sees none of hers', async () => {
    const queryClient = new QueryClient()
    const alice = setup({ scope: 'alice', queryClient })
    alice.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'For alice')))
    await settle()
    expect(texts(alice.session.getState())).toEqual(['Q', 'For alice'])
    expect(queryClient.getQueryData(historyQueryKey(key, 'alice'))).toBeDefined()
    expect(alice.client.queryKey(key)).toEqual(historyQueryKey(key, 'alice'))
    // Alice signs out, Bob signs in in the same tab: his client, the same query client.
    alice.client.dispose()
    const bob = setup({ scope: 'bob', queryClient })
    expect(bob.states).toHaveLength(1)
    expect(bob.states[0]).toMatchObject({ status: 'recovering', loaded: false, messages: [] })
    bob.server.answerRead({ status: 404 })
    await settle()
    // The sequence Bob saw: never a message of Alice's.
    expect(bob.states.every((state) => state.messages.length === 0)).toBe(true)
    expect(bob.session.getState()).toMatchObject({ notFound: true })
    bob.client.dispose()
  })

  it('persistence writes only its own scope, restores only its own scope, and stops when detached', async () => {
    const storage = storageOrigin().tab().sessionStorage
    const queryClient = new QueryClient()
    // One persistence object for the app, one client per user (the README's pattern).
    const persist = persistTranscripts({ storage })
    const alice = setup({ scope: 'alice', queryClient, persist })
    alice.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'For alice')))
    await settle()
    await vi.advanceTimersByTimeAsync(1_000)
    expect(storage.getItem('preview-chat:transcripts:alice')).toContain('For alice')
    // Sign-out: the app disposes Alice's client and clears the cache; Bob signs in and chats.
    alice.client.dispose()
    queryClient.clear()
    await vi.advanceTimersByTimeAsync(1_000)
    // Detached: clearing the cache wrote nothing for Alice.
    expect(storage.getItem('preview-chat:transcripts:alice')).toContain('For alice')
    const bob = setup({ scope: 'bob', queryClient, persist })
    bob.server.answerRead(snapshot(finishedTurn('e9', 'Bob asks', 'For bob')))
    await settle()
    await vi.advanceTimersByTimeAsync(1_000)
    expect(storage.getItem('preview-chat:transcripts:alice')).not.toContain('For bob')
    expect(storage.getItem('preview-chat:transcripts:bob')).toContain('For bob')
    expect(storage.getItem('preview-chat:transcripts:bob')).not.toContain('For alice')
    bob.client.dispose()
    // The page reloads (a new query client), Alice signs in again: her transcript, not Bob's.
    const reloaded = setup({
      scope: 'alice',
      queryClient: new QueryClient(),
      persist: persistTranscripts({ storage }),
    })
    expect(reloaded.states[0]).toMatchObject({ status: 'recovering', loaded: true })
    expect(reloaded.states.flatMap(texts)).not.toContain('For bob')
    expect(texts(reloaded.session.getState())).toEqual(['Q', 'For alice'])
    reloaded.client.dispose()
  })

  it("another scope's entry in a scope's storage is junk, never restored", async () => {
    const storage = storageOrigin().tab().sessionStorage
    storage.setItem(
      'preview-chat:transcripts:alice',
      JSON.stringify({
        v: 2,
        threads: [
          {
            queryKey: historyQueryKey(key, 'bob'),
            updatedAt: 1,
            data: snapshot(finishedTurn('e9', 'Bob asks', 'For bob')),
          },
        ],
      }),
    )
    const queryClient = new QueryClient()
    const alice = setup({ scope: 'alice', queryClient, persist: persistTranscripts({ storage }) })
    expect(alice.states[0]).toMatchObject({ loaded: false, messages: [] })
    expect(queryClient.getQueryData(historyQueryKey(key, 'bob'))).toBeUndefined()
    alice.client.dispose()
  })
})
