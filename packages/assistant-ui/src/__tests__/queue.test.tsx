// The client's queue (`queue()`) in assistant-ui's own queue UI (`ComposerPrimitive.Queue`,
// `QueueItemPrimitive`), against the MSW-mounted reference backend with held turns; and the
// adapter's mapping of the kit's queue calls, against a recorded chat.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  AssistantRuntimeProvider,
  ComposerPrimitive,
  QueueItemPrimitive,
  ThreadPrimitive,
  useAuiState,
  type AppendMessage,
  type AssistantRuntime,
} from '@assistant-ui/react'
import type { PreviewChat } from '@preview-chat/react'
import { memoryQueueStore } from '@preview-chat/msw'
import { queue, type QueuedMessage } from '@preview-chat/react/queue'
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { QueryClient } from '@tanstack/react-query'
import { useLayoutEffect } from 'react'
import { describe, expect, it } from 'vitest'
import {
  PreviewChatComposerInput,
  PreviewChatQueueResume,
  usePreviewChatRuntime,
  useQueuedMessage,
} from '../index'
import { previewChatQueue } from '../queue'
import { queueAdapter, toQueueItems } from '../queueAdapter'
import { input, Providers, setupChat, tabClient, thread } from './harness'

const chat = setupChat({ deltaMs: 0, snapshotMs: 5 })
const posts = () => chat.mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })
const recorded = (threadId: string) =>
  (chat.mock.backend.inspect.history(threadId)?.messages ?? [])
    .filter((m) => m.role === 'user')
    .map((m) => m.content.map((part) => (part.type === 'text' ? part.text : '')).join(''))

// #region example: queue
/** One queued message: its text, where it stands, "Run now" (next, once the thread is free), remove. */
function QueueItem() {
  const message = useQueuedMessage()
  return (
    <li data-status={message?.status}>
      <QueueItemPrimitive.Text />
      {message?.error && <small role="alert">{message.error.message}</small>}
      <QueueItemPrimitive.Steer>Run now</QueueItemPrimitive.Steer>
      <QueueItemPrimitive.Remove>Remove</QueueItemPrimitive.Remove>
    </li>
  )
}

/** The composer with what waits above its input, and "Send queued (N)" after a Stop. */
function Composer() {
  return (
    <ComposerPrimitive.Root>
      <ol aria-label="Queued">
        <ComposerPrimitive.Queue>{() => <QueueItem />}</ComposerPrimitive.Queue>
      </ol>
      <PreviewChatQueueResume />
      <PreviewChatComposerInput aria-label="Message" />
      <ComposerPrimitive.Send>Send</ComposerPrimitive.Send>
      <ComposerPrimitive.Cancel>Stop</ComposerPrimitive.Cancel>
    </ComposerPrimitive.Root>
  )
}
// #endregion

function Chat({ threadId, onRuntime }: { threadId: string; onRuntime(r: AssistantRuntime): void }) {
  const runtime = usePreviewChatRuntime({
    ...thread(threadId),
    throttleMs: 0,
    queue: previewChatQueue,
  })
  useLayoutEffect(() => {
    onRuntime(runtime)
  })
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ThreadPrimitive.Root>
        <Running />
        <ThreadPrimitive.Messages>{() => <Message />}</ThreadPrimitive.Messages>
        <Composer />
      </ThreadPrimitive.Root>
    </AssistantRuntimeProvider>
  )
}

function Message() {
  const role = useAuiState((s) => s.message.role)
  const text = useAuiState((s) =>
    s.message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''),
  )
  return <p data-testid={`message-${role}`}>{text}</p>
}

function Running() {
  const running = useAuiState((s) => s.thread.isRunning)
  const queues = useAuiState((s) => s.thread.capabilities.queue)
  return (
    <p data-testid="running" data-queue={String(queues)}>
      {String(running)}
    </p>
  )
}

function mount(user = 'alice') {
  const { threadId } = thread()
  const probe: { runtime: AssistantRuntime | null } = { runtime: null }
  render(
    <Providers
      client={tabClient(user, { queue: queue({ store: memoryQueueStore() }) })}
      queryClient={new QueryClient()}
    >
      <Chat
        threadId={threadId}
        onRuntime={(runtime) => {
          probe.runtime = runtime
        }}
      />
    </Providers>,
  )
  const runtime = () => {
    if (!probe.runtime) throw new Error('not rendered yet')
    return probe.runtime
  }
  return { threadId, runtime }
}

const type = (text: string) => fireEvent.change(input(), { target: { value: text } })
const sendButton = () => screen.getByText<HTMLButtonElement>('Send')
const queued = () => within(screen.getByLabelText('Queued')).queryAllByRole('listitem')
const userMessages = () => screen.queryAllByTestId('message-user').map((m) => m.textContent)
const running = () => screen.getByTestId('running').textContent === 'true'

/** Sends `text` from the composer once Send is enabled. */
async function send(text: string) {
  type(text)
  await waitFor(() => expect(sendButton().disabled).toBe(false))
  fireEvent.click(sendButton())
}

/** Starts a turn held at its first pause, from the composer. */
async function startHeldTurn(text = '/long 3') {
  const gate = chat.mock.holdTurns()
  await send(text)
  await waitFor(() => expect(running()).toBe(true))
  return gate
}

describe('usePreviewChatRuntime with a queue', () => {
  it('gives the kit its queue: Send while a turn runs queues, shown in ComposerPrimitive.Queue, not in the thread, then sent once [R-QUEUE-CLIENT-KIT]', async () => {
    const { threadId } = mount()
    expect(screen.getByTestId('running').getAttribute('data-queue')).toBe('true')
    const gate = await startHeldTurn()

    await send('second')
    await waitFor(() => expect(queued()).toHaveLength(1))
    expect(queued()[0]?.textContent).toContain('second')
    expect(queued()[0]?.getAttribute('data-status')).toBe('queued')
    expect(input().value).toBe('')
    expect(userMessages()).toEqual(['/long 3'])
    // Enter queues too (the kit's own rule with a queue): the key's default is the kit's.
    type('third')
    fireEvent.keyDown(input(), { key: 'Enter' })
    await waitFor(() => expect(queued()).toHaveLength(2))

    gate.release()
    await waitFor(() => expect(userMessages()).toEqual(['/long 3', 'second', 'third']))
    await waitFor(() => expect(queued()).toHaveLength(0))
    await waitFor(() => expect(running()).toBe(false))
    expect(recorded(threadId)).toEqual(['/long 3', 'second', 'third'])
    expect(posts()).toBe(3)
  })

  it('Run now sends that one next (no interruption), Remove removes [R-QUEUE-CLIENT-KIT]', async () => {
    const { threadId } = mount()
    const gate = await startHeldTurn()
    for (const text of ['one', 'two', 'three']) await send(text)
    await waitFor(() => expect(queued()).toHaveLength(3))

    fireEvent.click(within(queued()[1]!).getByText('Remove'))
    await waitFor(() => expect(queued().map((q) => q.textContent)).toHaveLength(2))
    fireEvent.click(within(queued()[1]!).getByText('Run now'))
    await waitFor(() => expect(queued()[0]?.textContent).toContain('three'))
    expect(running()).toBe(true) // the running turn goes on

    gate.release()
    await waitFor(() => expect(userMessages()).toEqual(['/long 3', 'three', 'one']))
    await waitFor(() => expect(queued()).toHaveLength(0))
    expect(recorded(threadId)).toEqual(['/long 3', 'three', 'one'])
    expect(posts()).toBe(3)
  })

  it('Stop pauses the queue; PreviewChatQueueResume sends it ("Send queued (N)") [R-QUEUE-CLIENT-STOPPED]', async () => {
    const { threadId } = mount()
    const gate = await startHeldTurn('/long 5')
    await send('after the stop')
    await waitFor(() => expect(queued()).toHaveLength(1))
    expect(screen.queryByText(/Send queued/)).toBeNull()

    fireEvent.click(screen.getByText('Stop'))
    const resume = await screen.findByText('Send queued (1)')
    await waitFor(() => expect(running()).toBe(false))
    expect(posts()).toBe(1)
    gate.release()
    fireEvent.click(resume)
    await waitFor(() => expect(recorded(threadId)).toEqual(['/long 5', 'after the stop']))
    await waitFor(() => expect(queued()).toHaveLength(0))
    expect(screen.queryByText(/Send queued/)).toBeNull()
  })

  it('a message the session refuses is handed back to the composer [R-QUEUE-CLIENT-KIT]', async () => {
    mount('carol') // reads, may not post: the POST is refused (forbidden)
    await send('not allowed')
    await waitFor(() => expect(input().value).toBe('not allowed'))
    expect(queued()).toHaveLength(0)
    expect(posts()).toBe(1)
  })
})

it('the README shows the composer with its queue as it is', () => {
  const here = readFileSync(import.meta.filename, 'utf8')
  const region = /\/\/ #region example: queue\n([\s\S]*?)\n\/\/ #endregion/.exec(here)?.[1] ?? ''
  const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8')
  expect(region.length).toBeGreaterThan(800)
  expect(readme).toContain(region)
})

describe('queueAdapter', () => {
  /** A chat with `queue`, recording each queue action it is asked for. */
  function recordedChat(items: string[]) {
    const calls: unknown[][] = []
    const record =
      (name: string) =>
      (...args: unknown[]) =>
        void calls.push([name, ...args])
    const queued = items.map((id): QueuedMessage => ({ id, text: id, status: 'queued' }))
    const chat = {
      queue: queued,
      submit: (text: string) => {
        calls.push(['submit', text])
        return Promise.resolve({ outcome: 'queued', id: text })
      },
      editQueued: record('editQueued'),
      removeQueued: record('removeQueued'),
      reorderQueued: record('reorderQueued'),
      sendQueuedNow: record('sendQueuedNow'),
    } as unknown as PreviewChat
    const refused: string[] = []
    const adapter = queueAdapter(
      toQueueItems(queued),
      [],
      () => chat,
      (text) => refused.push(text),
    )
    return { adapter, calls, refused }
  }
  const message = (...texts: string[]) =>
    ({ content: texts.map((text) => ({ type: 'text', text })) }) as unknown as AppendMessage

  it('a message the server adds to the running turn is in the steer lane until it has joined', () => {
    const queue = [
      { id: 's', text: 'joining', status: 'steering', queueId: '1' },
      { id: 'a', text: 'waiting', status: 'queued', queueId: '2' },
      { id: 'b', text: 'here', status: 'queued' },
    ] as const
    const chat = { queue } as unknown as PreviewChat
    const adapter = previewChatQueue(
      queue,
      () => chat,
      () => undefined,
    )
    expect(adapter.steerItems.map((item) => item.id)).toEqual(['s'])
    expect(adapter.items.map((item) => item.id)).toEqual(['a', 'b'])
  })

  it('has one lane: the items in order, no steer items; enqueue and steer both submit', async () => {
    const { adapter, calls } = recordedChat(['a', 'b'])
    expect(adapter.items).toEqual([
      { id: 'a', prompt: 'a', parts: [{ type: 'text', text: 'a' }] },
      { id: 'b', prompt: 'b', parts: [{ type: 'text', text: 'b' }] },
    ])
    expect(adapter.steerItems).toEqual([])
    adapter.enqueue(message('one'))
    adapter.steer(message('two', 'lines'))
    await act(() => Promise.resolve())
    expect(calls).toEqual([
      ['submit', 'one'],
      ['submit', 'two\n\nlines'],
    ])
  })

  it.each([
    [{ lane: 'steer' as const, insertAfter: null }, ['sendQueuedNow', 'c']],
    [{ insertAfter: null }, ['reorderQueued', 'c', 0]],
    [{ insertAfter: 'a' }, ['reorderQueued', 'c', 1]],
    [{ insertBefore: 'a' }, ['reorderQueued', 'c', 0]],
    [{ insertBefore: null }, ['reorderQueued', 'c', 2]],
    [{ lane: 'queue' as const, insertAfter: 'b', insertBefore: null }, ['reorderQueued', 'c', 2]],
  ])('move(c, %j) of [a, b, c] is %j', (placement, call) => {
    const { adapter, calls } = recordedChat(['a', 'b', 'c'])
    adapter.move('c', placement)
    expect(calls).toEqual([call])
  })

  it('a move that names no place, or a message that is gone, does nothing', () => {
    const { adapter, calls } = recordedChat(['a', 'b', 'c'])
    adapter.move('c', {})
    adapter.move('c', { insertAfter: 'gone' })
    adapter.move('c', { insertBefore: 'gone' })
    expect(calls).toEqual([])
  })

  it('edit and remove are editQueued and removeQueued', () => {
    const { adapter, calls } = recordedChat(['a'])
    adapter.edit('a', message('new text'))
    adapter.remove('a')
    expect(calls).toEqual([
      ['editQueued', 'a', 'new text'],
      ['removeQueued', 'a'],
    ])
  })
})
