import { createPreviewChatClient, ssePush, websocketPush } from '@preview-chat/core'
import { describe, expect, it } from 'vitest'
import { setupPreviewChatServer } from '../vitest'
import { follow, textOf } from './harness'

// Node 20 has no global WebSocket; msw's interceptor only patches one that exists. A placeholder
// lets it install its mock (browsers and Node 22+ need none).
if (typeof globalThis.WebSocket === 'undefined') {
  Object.defineProperty(globalThis, 'WebSocket', {
    value: function PlaceholderWebSocket() {},
    configurable: true,
    writable: true,
  })
}

const chat = setupPreviewChatServer({ deltaMs: 0, snapshotMs: 5, user: 'alice' })

/** Bounded wait on a condition the test cannot subscribe to. */
async function eventually(condition: () => boolean, what: string) {
  for (let index = 0; index < 200; index++) {
    if (condition()) return
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error(`Timed out waiting for ${what}.`)
}

describe.each(['websocket', 'sse'] as const)('the push channel over %s', (push) => {
  it("announces the owner's recordings, so a follower converges without polling [R-MSW-PUSH R-READ-ON-PUSH]", async () => {
    const seeded = await chat.mock.seed.runningTurn({ message: 'over the socket' })
    const client = createPreviewChatClient({
      baseUrl: 'http://localhost/rest',
      push: push === 'sse' ? ssePush() : websocketPush(),
      // The SSE adapter sends headers; the WebSocket one cannot, and gets the mock's user.
      ...(push === 'sse' && { headers: { authorization: 'Bearer alice' } }),
      storage: null,
      lingerMs: 0,
      resumeSignal: () => () => {},
      // Polling so slow that only a push notification can bring the end in time.
      poll: { baseMs: 600_000, maxMs: 600_000 },
    })
    const session = client.session(seeded.key)
    const t = follow(session)
    await t.until((s) => s.status === 'following', 'following')
    await eventually(
      () => chat.mock.backend.inspect.pushConnections('alice') === 1,
      'the push connection',
    )
    const readsBefore = chat.mock.backend.inspect.countRequests({ route: 'messages' })
    seeded.turn.release()
    const done = await t.until(
      (s) => s.status === 'idle',
      'the end, announced over the push channel',
    )
    expect(textOf(done.messages[1])).toBe('You said (3 words): "over the socket"')
    expect(chat.mock.backend.inspect.countRequests({ route: 'messages' })).toBeGreaterThan(
      readsBefore,
    )
    t.unsubscribe()
  })
})
