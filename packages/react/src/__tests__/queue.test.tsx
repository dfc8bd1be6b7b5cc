// The client's queue (`queue()`, issue 29) through the hook, against the MSW-mounted reference
// backend: what `usePreviewChat` returns of it at every commit, its actions, and what a component
// that reads only `status` pays for it. The agent's pauses are held (`holdTurns`), so a turn runs
// exactly as long as the test wants.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import type { ReactNode } from 'react'
import { describe, expect, it } from 'vitest'
import { usePreviewChat, usePreviewChatSelector, type Message, type PreviewChat } from '../index'
import type { SessionState, ThreadKey } from '../index'
import { queue } from '../queue'
import { memoryQueueStore, type QueueStore } from '@preview-chat/core/queue'
import { createProbe, Providers, setupChat, tabClient, thread } from './harness'

const chat = setupChat({ deltaMs: 0, snapshotMs: 5 })
const posts = () => chat.mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })
/** The user messages the backend recorded for the thread, in order. */
const recorded = (threadId: string) =>
  userTexts(chat.mock.backend.inspect.history(threadId) ?? { messages: [] })

/** A store in memory whose writes a test can see at once (its `map`). */
function memoryStorage(): QueueStore & { map: Map<string, string> } {
  const store = memoryQueueStore()
  const map = new Map<string, string>()
  return {
    map,
    read: store.read,
    watch: store.watch,
    update: (key, change) =>
      store.update(key, (stored) => {
        const next = change(stored)
        if (next === null) map.delete(key)
        else if (next !== undefined) map.set(key, next)
        return next
      }),
  }
}

/** Alice's tab with a queue kept in `store`. */
const queueClient = (store: QueueStore = memoryStorage()) =>
  tabClient('alice', { queue: queue({ store }) })

const userTexts = (state: Pick<SessionState, 'messages'>) =>
  state.messages
    .filter((m) => m.role === 'user')
    .map((m) => m.content.map((part) => (part.type === 'text' ? part.text : '')).join(''))

/** `text:status` of each queued message, `|paused` when paused: one line per state. */
const describeQueue = (state: SessionState) =>
  `[${(state.queue ?? []).map((m) => `${m.text}:${m.status}`).join(',')}]${state.queuePaused ? '|paused' : ''}`

const distinct = (lines: string[]) => lines.filter((line, i) => i === 0 || lines[i - 1] !== line)

/** A probe of the hook on a new thread, with a queue; `children` share its client. */
function mountQueued(storage = memoryStorage(), children?: (key: ThreadKey) => ReactNode) {
  const key = { ...thread(), throttleMs: 0 as const }
  const probe = createProbe()
  const client = queueClient(storage)
  const view = render(
    <Providers client={client}>
      <probe.Probe {...key} isNew />
      {children?.(key)}
    </Providers>,
  )
  return { ...probe, key, client, storage, view }
}

/** Starts a held turn and waits until it streams. */
async function startHeldTurn(api: () => PreviewChat, text = '/long 3') {
  const gate = chat.mock.holdTurns()
  await waitFor(() => expect(api().status).toBe('idle'))
  await act(async () => void (await api().submit(text)))
  await waitFor(() => expect(api().status).toBe('streaming'))
  return gate
}

describe('usePreviewChat with a queue', () => {
  it('returns a message sent while a turn runs in chat.queue, never in chat.messages, and each queue state in order [R-QUEUE-CLIENT]', async () => {
    const { chat: api, probe, key } = mountQueued()
    const gate = await startHeldTurn(api)

    act(() => api().setDraft('second'))
    let result: Awaited<ReturnType<PreviewChat['submit']>> | undefined
    await act(async () => void (result = await api().submit()))
    expect(result).toEqual({ outcome: 'queued', id: expect.any(String) })
    const id = result?.outcome === 'queued' ? result.id : ''
    expect(api().queue).toEqual([{ id, text: 'second', status: 'queued' }])
    expect(api().queuePaused).toBe(false)
    expect(api().draft).toBe('')
    expect(userTexts(api())).toEqual(['/long 3'])

    gate.release()
    await waitFor(() => {
      expect(userTexts(api())).toEqual(['/long 3', 'second'])
      expect(api().status).toBe('idle')
      expect(api().queue).toEqual([])
    })
    expect(distinct(probe.log.map(describeQueue))).toEqual([
      '[]',
      '[second:queued]',
      '[second:sending]',
      '[]',
    ])
    // At no commit is a message both queued and in the transcript: nothing shows twice.
    for (const state of probe.log) {
      const shown = userTexts(state)
      for (const item of state.queue ?? []) expect(shown).not.toContain(item.text)
    }
    expect(posts()).toBe(2)
    expect(recorded(key.threadId)).toEqual(['/long 3', 'second'])
    // The recorded user message carries the queued message's id.
    const history = chat.mock.backend.inspect.history(key.threadId)
    expect(history?.messages.filter((m) => m.role === 'user')[1]?.messageId).toBe(id)
  })

  it('its actions change chat.queue in the same commit, and what is sent in which order [R-QUEUE-CLIENT-EDIT]', async () => {
    const { chat: api, key } = mountQueued()
    const gate = await startHeldTurn(api, '/long 2')
    for (const text of ['one', 'two', 'three', 'four'])
      await act(async () => void (await api().submit(text)))
    const id = (text: string) => api().queue?.find((m) => m.text === text)?.id ?? ''

    act(() => api().editQueued?.(id('one'), 'one, edited'))
    expect(describeQueue(api())).toBe('[one, edited:queued,two:queued,three:queued,four:queued]')
    act(() => api().removeQueued?.(id('two')))
    expect(describeQueue(api())).toBe('[one, edited:queued,three:queued,four:queued]')
    act(() => api().reorderQueued?.(id('three'), 0))
    expect(describeQueue(api())).toBe('[three:queued,one, edited:queued,four:queued]')
    act(() => api().sendQueuedNow?.(id('four')))
    expect(describeQueue(api())).toBe('[four:queued,three:queued,one, edited:queued]')

    gate.release()
    await waitFor(() => expect(userTexts(api())).toHaveLength(4))
    await waitFor(() => expect(api().status).toBe('idle'))
    expect(userTexts(api())).toEqual(['/long 2', 'four', 'three', 'one, edited'])
    expect(posts()).toBe(4)
    expect(recorded(key.threadId)).toEqual(userTexts(api()))
  })

  it('Stop pauses it (chat.queuePaused) and resumeQueue() sends what waits [R-QUEUE-CLIENT-STOPPED]', async () => {
    const { chat: api, probe } = mountQueued()
    const gate = await startHeldTurn(api, '/long 5')
    await act(async () => void (await api().submit('after the stop')))
    await act(async () => void (await api().stop()))
    await waitFor(() => expect(api().status).toBe('idle'))
    expect(api().queuePaused).toBe(true)
    expect(describeQueue(api())).toBe('[after the stop:queued]|paused')
    expect(posts()).toBe(1)

    gate.release()
    act(() => api().resumeQueue?.())
    await waitFor(() => expect(userTexts(api())).toEqual(['/long 5', 'after the stop']))
    await waitFor(() => expect(api().queue).toEqual([]))
    // Resumed, it is queued again until the write lock lets the sender mark it: a state React may
    // or may not commit on its own (the lock is granted a microtask later), so it is not counted.
    const seen = distinct(probe.log.map(describeQueue))
    expect(seen.filter((shown, i) => !(shown === '[after the stop:queued]' && i > 2))).toEqual([
      '[]',
      '[after the stop:queued]',
      '[after the stop:queued]|paused',
      '[after the stop:sending]',
      '[]',
    ])
  })

  it('a reload shows what the last page queued before the thread is free [R-QUEUE-CLIENT-DURABLE]', async () => {
    const storage = memoryStorage()
    const first = mountQueued(storage)
    const gate = await startHeldTurn(first.chat)
    await act(async () => void (await first.chat().submit('kept across the reload')))
    await waitFor(() => expect([...storage.map.values()].join()).toContain('kept across'))
    // The page goes away (its turn runs on on the server).
    first.view.unmount()
    first.client.dispose()

    const next = createProbe()
    render(
      <Providers client={queueClient(storage)}>
        <next.Probe {...first.key} isNew={false} />
      </Providers>,
    )
    await waitFor(() => expect(describeQueue(next.chat())).toBe('[kept across the reload:queued]'))
    expect(userTexts(next.chat())).not.toContain('kept across the reload')
    gate.release()
    await waitFor(() =>
      expect(userTexts(next.chat())).toEqual(['/long 3', 'kept across the reload']),
    )
    expect(posts()).toBe(2)
    expect(recorded(first.key.threadId)).toEqual(['/long 3', 'kept across the reload'])
  })

  it('without queue() the hook returns no queue and no queue actions [R-QUEUE-CLIENT]', async () => {
    const probe = createProbe()
    render(
      <Providers client={tabClient()}>
        <probe.Probe {...thread()} isNew />
      </Providers>,
    )
    await waitFor(() => expect(probe.chat().status).toBe('idle'))
    const state = probe.chat()
    expect(state.queue).toBeUndefined()
    expect(state.queuePaused).toBeUndefined()
    expect(state.editQueued).toBeUndefined()
    expect(state.resumeQueue).toBeUndefined()
  })
})

describe('usePreviewChatSelector with a queue', () => {
  it('a component reading only status does not re-render on queue changes; one reading the queue does, once per change [R-QUEUE-CLIENT]', async () => {
    let statusRenders = 0
    let queueRenders = 0
    function Status({ thread }: { thread: ThreadKey }) {
      const status = usePreviewChatSelector({ ...thread, throttleMs: 0 }, (s) => s.status)
      statusRenders++
      return <p>{status}</p>
    }
    function QueueLength({ thread }: { thread: ThreadKey }) {
      const queued = usePreviewChatSelector({ ...thread, throttleMs: 0 }, (s) => s.queue)
      queueRenders++
      return <p>{queued?.length}</p>
    }
    const { chat: api, storage } = mountQueued(memoryStorage(), (key) => (
      <>
        <Status thread={key} />
        <QueueLength thread={key} />
      </>
    ))
    const gate = await startHeldTurn(api)
    const before = { status: statusRenders, queue: queueRenders }
    const stored = () => [...storage.map.values()].join()

    await act(async () => void (await api().submit('queued')))
    await waitFor(() => expect(stored()).toContain('queued'))
    const id = api().queue?.[0]?.id ?? ''
    act(() => api().editQueued?.(id, 'edited'))
    await waitFor(() => expect(stored()).toContain('edited'))
    act(() => api().removeQueued?.(id))
    await waitFor(() => expect(stored()).not.toContain('edited'))

    expect(api().status).toBe('streaming')
    expect(statusRenders).toBe(before.status)
    // Added, edited, removed: three renders; the writes to storage between them, none.
    expect(queueRenders).toBe(before.queue + 3)
    gate.release()
    await waitFor(() => expect(api().status).toBe('idle'))
  })
})

// #region example: queue
/** The messages waiting for the thread: edit, send now, remove; "Send queued (N)" once paused. */
function QueuedMessages({ chat }: { chat: PreviewChat }) {
  const queued = chat.queue ?? []
  return (
    <>
      {chat.queuePaused && (
        <button type="button" onClick={() => chat.resumeQueue?.()}>
          Send queued ({queued.filter((message) => message.held).length})
        </button>
      )}
      <ol aria-label="Queued">
        {queued.map((message) => (
          <li key={message.id} data-status={message.status}>
            <input
              aria-label="Queued message"
              value={message.text}
              readOnly={message.status === 'sending'}
              onChange={(event) => chat.editQueued?.(message.id, event.target.value)}
            />
            {message.error && <small role="alert">{message.error.message}</small>}
            {message.status !== 'sending' && (
              <>
                <button type="button" onClick={() => chat.sendQueuedNow?.(message.id)}>
                  Send now
                </button>
                <button type="button" onClick={() => chat.removeQueued?.(message.id)}>
                  Remove
                </button>
              </>
            )}
          </li>
        ))}
      </ol>
    </>
  )
}

const textOf = (message: Message) =>
  message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')

function Chat({ threadId }: { threadId: string }) {
  const chat = usePreviewChat({ projectId: 'demo-project', agentId: 'demo-agent', threadId })
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault()
        void chat.submit()
      }}
    >
      <ol aria-label="Transcript">
        {chat.messages.map((message) => (
          <li key={message.id}>{textOf(message)}</li>
        ))}
      </ol>
      <QueuedMessages chat={chat} />
      <textarea
        aria-label="Message"
        value={chat.draft}
        onChange={(event) => chat.setDraft(event.target.value)}
      />
      {/* With a queue, `canSubmit` is "the draft has text" while a turn runs too (the message
          waits in `chat.queue`), but not while that draft is on its way: Send cannot send it twice. */}
      <button disabled={!chat.canSubmit}>Send</button>
      {chat.canStop && (
        <button type="button" onClick={() => void chat.stop()}>
          Stop
        </button>
      )}
    </form>
  )
}
// #endregion

describe("the README's queued messages", () => {
  const type = (text: string) =>
    fireEvent.change(screen.getByLabelText('Message'), { target: { value: text } })
  const send = () => fireEvent.click(screen.getByText('Send'))
  const queued = () => within(screen.getByLabelText('Queued')).queryAllByRole('listitem')

  it('lists what waits, edits and removes it, and sends it after a Stop with "Send queued (N)" [R-QUEUE-CLIENT-STOPPED]', async () => {
    const { threadId } = thread()
    const gate = chat.mock.holdTurns()
    render(
      <Providers client={queueClient()}>
        <Chat threadId={threadId} />
      </Providers>,
    )
    type('/long 3')
    await waitFor(() => expect(screen.getByText<HTMLButtonElement>('Send').disabled).toBe(false))
    send()
    await screen.findByText('Stop')
    type('one')
    send()
    type('two')
    send()
    await waitFor(() => expect(queued()).toHaveLength(2))
    expect(screen.getByLabelText<HTMLTextAreaElement>('Message').value).toBe('')
    fireEvent.change(screen.getAllByLabelText('Queued message')[0]!, {
      target: { value: 'one, edited' },
    })

    fireEvent.click(screen.getByText('Stop'))
    await screen.findByText('Send queued (2)')
    fireEvent.click(within(queued()[1]!).getByText('Remove'))
    await screen.findByText('Send queued (1)')
    gate.release()
    fireEvent.click(screen.getByText('Send queued (1)'))

    const transcript = () => within(screen.getByLabelText('Transcript'))
    await waitFor(() => expect(transcript().queryByText('one, edited')).not.toBeNull())
    await waitFor(() => expect(queued()).toHaveLength(0))
    expect(transcript().queryByText('two')).toBeNull()
    expect(recorded(threadId)).toEqual(['/long 3', 'one, edited'])
    expect(posts()).toBe(2)
  })

  it('is shown verbatim in the README', () => {
    const here = readFileSync(import.meta.filename, 'utf8')
    const region = /\/\/ #region example: queue\n([\s\S]*?)\n\/\/ #endregion/.exec(here)?.[1] ?? ''
    const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8')
    expect(region.length).toBeGreaterThan(1000)
    expect(readme).toContain(region)
    expect(readme).toContain(
      "import { usePreviewChat, type Message, type PreviewChat } from '@preview-chat/react'",
    )
  })
})
