/**
 * A thread opened by URL before it exists (issue 35, row g): the page of the assistant-ui README,
 * opened as it says, without `isNew`. The first read answers 404 (`notFound`), the first message
 * creates the thread. Through the session against the reference server, every state recorded.
 */
import { afterEach, describe, expect, it } from 'vitest'
// A relative import keeps the workspace free of a core ⇄ server dependency cycle (test-only).
import { createPreviewChatBackend, type PreviewChatBackend } from '../../../server/src/index'
import { createPreviewChatClient, ssePush, type SessionState } from '../index'

let backend: PreviewChatBackend
afterEach(() => backend.close())

/** Alice's tab on a thread nobody created yet, with the push channel of the default client. */
function newThreadTab() {
  backend = createPreviewChatBackend({ dev: true, deltaMs: 1, snapshotMs: 5 })
  const threadId = crypto.randomUUID()
  const client = createPreviewChatClient({
    headers: { Authorization: 'Bearer alice' },
    fetch: (input, init) => backend.fetch(new Request(new URL(String(input), 'http://x'), init)),
    push: ssePush({ reconnectBaseMs: 5 }),
    relay: false,
    storage: null,
    lingerMs: 0,
    minReadIntervalMs: 5,
    retry: { baseMs: 5, maxMs: 20 },
  })
  const session = client.session({ projectId: 'p', agentId: 'a', threadId })
  const states: SessionState[] = []
  const stop = session.subscribe((state) => states.push(state))
  const reads = () =>
    backend.inspect.requests.filter(
      (request) => request.method === 'GET' && request.route === 'messages',
    )
  return { session, states, stop, reads }
}

async function until(done: () => boolean) {
  for (let i = 0; i < 2_000 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 2))
  expect(done()).toBe(true)
}
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The first message sent on it, followed to its end: what was read and shown, in order. */
async function firstMessage() {
  const tab = newThreadTab()
  await until(() => tab.session.getState().notFound)
  // The channel connects meanwhile; nothing changed on a thread that does not exist.
  await pause(100)
  const readsBeforeSend = tab.reads().map((read) => read.status)
  const sentAt = tab.states.length
  expect(await tab.session.submit('hello')).toMatchObject({ outcome: 'accepted' })
  // The turn's end, and a read of its record (the record, not the live view, on screen).
  await until(
    () =>
      tab.session.getState().status === 'idle' &&
      tab.session.getState().messages.length === 2 &&
      tab.reads().some((read) => read.status === 200),
  )
  await pause(20)
  tab.stop()
  const shown = tab.states.map((state) => ({
    status: state.status,
    notFound: state.notFound,
    readError: state.readError?.code ?? null,
  }))
  return { tab, readsBeforeSend, readsAfterSend: tab.reads().slice(1), sentAt, shown }
}

describe('a thread opened before it exists, without isNew (issue 35, row g)', () => {
  it('its 404 is no error at any moment: not before the first message, nor during its answer [R-READ-404-NO-ERROR]', async () => {
    const { shown, sentAt } = await firstMessage()
    // Every state, in order, with repeats folded: notFound until the message is taken, never a
    // readError (the assistant-ui kit's status line said "Cannot read this thread (retrying)…
    // HTTP 404" all through the first answer).
    const folded = shown.filter(
      (state, i) => i === 0 || JSON.stringify(state) !== JSON.stringify(shown[i - 1]),
    )
    expect(folded.filter((state) => state.readError !== null)).toEqual([])
    expect(shown[sentAt - 1]).toEqual({ status: 'idle', notFound: true, readError: null })
    expect(shown.slice(sentAt).some((state) => state.status === 'streaming')).toBe(true)
    expect(shown.at(-1)).toEqual({ status: 'idle', notFound: false, readError: null })
  })

  it('is read once before the first message: the push channel connecting asks nothing again [R-READ-404-ONCE]', async () => {
    const { readsBeforeSend, readsAfterSend } = await firstMessage()
    expect(readsBeforeSend).toEqual([404])
    // After the send, the reads that follow the turn find it: never a 404 again.
    expect(readsAfterSend.length).toBeGreaterThan(0)
    expect(readsAfterSend.map((read) => read.status)).not.toContain(404)
  })
})
