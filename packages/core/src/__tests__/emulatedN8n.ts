/**
 * A browser tab of alice on the reference server's emulation of the released n8n 2.41
 * (`flavor: 'n8n-2.41'`): her cookie and browser-id, push from the backend as a source of her own,
 * storage of her own (drafts kept as a tab keeps them), and the short timings the
 * released-protocol suites run with. A test adds or replaces options (its own `fetch` that counts
 * or fails requests, a relay, `released`).
 */
// A relative import keeps the workspace free of a core ⇄ server dependency cycle (test-only).
import type { PreviewChatBackend } from '../../../server/src/index'
import type { PreviewChatClientOptions, PreviewChatSession, SessionState } from '../index'
import { storageOrigin } from './world/storage'

export function aliceOnEmulatedN8n(backend: PreviewChatBackend) {
  return {
    headers: { cookie: 'n8n-auth=alice', 'browser-id': 'browser-1' },
    fetch: async (input: RequestInfo | URL, init?: RequestInit) =>
      backend.fetch(new Request(new URL(String(input), 'http://localhost'), init)),
    push: {
      subscribe(listener) {
        queueMicrotask(() => listener.onConnectionChange?.(true))
        return backend.subscribePush('alice', (message) => listener.onMessage(message))
      },
    },
    storage: storageOrigin().tab().sessionStorage, // her tab's own
    lingerMs: 0,
    minReadIntervalMs: 5,
    retry: { baseMs: 5, maxMs: 20 },
    poll: { baseMs: 10, maxMs: 40 },
    resumeSignal: () => () => {},
  } satisfies PreviewChatClientOptions
}

/** Every state `session` passes through from now on, and its statuses as they changed. */
export function watch(session: PreviewChatSession) {
  const states: SessionState[] = []
  const stop = session.subscribe((state) => states.push(state))
  const statuses = () =>
    states.map((s) => s.status).filter((status, i, all) => i === 0 || all[i - 1] !== status)
  return { states, statuses, stop }
}

/** The text of the last message, where it is the assistant's; else `''`. */
export const answer = (s: SessionState) => {
  const last = s.messages.at(-1)
  return last?.role === 'assistant'
    ? last.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
    : ''
}
