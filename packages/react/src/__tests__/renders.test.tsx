import {
  createMinimalPreviewChatClient,
  ssePush,
  type Message,
  type PreviewChatClient,
} from '@preview-chat/core'
import { act, render, waitFor } from '@testing-library/react'
import { memo, Profiler } from 'react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { usePreviewChat } from '../usePreviewChat'
import { Providers, setupChat, tabClient, thread } from './harness'

const chat = setupChat({ deltaMs: 1, snapshotMs: 5 })
const until = { timeout: 10_000 }

afterEach(() => {
  vi.unstubAllGlobals()
})

/** requestAnimationFrame that runs only when the test says a frame passed. */
function manualFrames() {
  let queue: FrameRequestCallback[] = []
  vi.stubGlobal('requestAnimationFrame', (callback: FrameRequestCallback) => queue.push(callback))
  vi.stubGlobal('cancelAnimationFrame', (handle: number) => {
    queue = queue.filter((_, i) => i + 1 !== handle)
  })
  return {
    pending: () => queue.length,
    frame() {
      const run = queue
      queue = []
      act(() => run.forEach((callback) => callback(performance.now())))
    },
  }
}

const answerText = (messages: Message[]) =>
  messages
    .filter((m) => m.role === 'assistant')
    .flatMap((m) => m.content)
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join('')

/**
 * Mounts one chat of `client` (counting React commits), lets it go idle, then sends `/long 60`
 * and holds it once 21 steps have streamed.
 */
async function streamingChat(client: PreviewChatClient) {
  const key = thread()
  const counted = { commits: 0 }
  let latest: ReturnType<typeof usePreviewChat> | null = null
  function Chat() {
    latest = usePreviewChat(key)
    return <p>{answerText(latest.messages)}</p>
  }
  render(
    <Providers client={client}>
      <Profiler id="chat" onRender={() => void counted.commits++}>
        <Chat />
      </Profiler>
    </Providers>,
  )
  const api = () => latest!
  await waitFor(() => expect(api().status).toBe('idle'), until)
  const gate = chat.mock.holdTurns()
  act(() => api().setDraft('/long 60'))
  act(() => void api().submit())
  await gate.step(21)
  await waitFor(() => expect(api().status).toBe('streaming'), until)
  return { key, api, gate, counted }
}

describe('render frugality (the peers’ re-render storms)', () => {
  it('streamed deltas reach React at most once per frame; the end of the turn is not delayed [R-PERF-FRAME]', async () => {
    const frames = manualFrames()
    const { key, api, gate, counted } = await streamingChat(tabClient())
    const before = counted.commits
    const streamedBefore = answerText(api().messages)
    await gate.step(10) // ten more deltas arrive, no frame passes
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(counted.commits).toBe(before)
    expect(answerText(api().messages)).toBe(streamedBefore)
    frames.frame() // one frame: one commit carrying all ten
    expect(counted.commits).toBe(before + 1)
    expect(answerText(api().messages).length).toBeGreaterThan(streamedBefore.length)

    gate.release() // the rest streams; the turn ends
    await waitFor(() => expect(api().status).toBe('idle'), until)
    // The end of the turn changed the status, so it went through at once, carrying the whole
    // answer: no frame had to pass for it.
    await waitFor(() => expect(chat.mock.backend.inspect.running()).toEqual([]), until)
    const record = chat.mock.backend.inspect.history(key.threadId)!
    expect(answerText(api().messages)).toBe(answerText(record.messages))
  })

  it('a minimal client without a throttle passes each delta on as it comes, no frame needed [R-PAY-FOR-USE]', async () => {
    const frames = manualFrames()
    const { api, gate } = await streamingChat(
      createMinimalPreviewChatClient({
        baseUrl: 'http://localhost/rest',
        headers: { authorization: 'Bearer alice' },
        push: ssePush(),
        lingerMs: 20,
      }),
    )
    const seen = [answerText(api().messages)]
    for (let delta = 0; delta < 3; delta++) {
      await gate.step(1)
      await waitFor(() => expect(answerText(api().messages)).not.toBe(seen.at(-1)), until)
      seen.push(answerText(api().messages))
    }
    // Each step grew the text on screen by itself: no animation frame was ever asked for.
    const lengths = seen.map((text) => text.length)
    expect(lengths.every((length, i) => i === 0 || length > lengths[i - 1]!)).toBe(true)
    expect(frames.pending()).toBe(0)
    gate.release()
    await waitFor(() => expect(api().status).toBe('idle'), until)
  })

  it('a snapshot replace re-renders only the messages that changed [R-PERF-REPLACE]', async () => {
    const earlier = await chat.mock.seed.thread({ messages: ['one', 'two'] })
    const seeded = await chat.mock.seed.runningTurn({
      threadId: earlier.key.threadId,
      message: '/long 8',
    })
    const client = tabClient('alice', { push: ssePush() })
    const renders = new Map<string, number>()
    const MessageView = memo(function MessageView({ message }: { message: Message }) {
      renders.set(message.id, (renders.get(message.id) ?? 0) + 1)
      return <li>{answerText([{ ...message, role: 'assistant' }])}</li>
    })
    let latest: ReturnType<typeof usePreviewChat> | null = null
    function Chat() {
      latest = usePreviewChat({ ...seeded.key, throttleMs: 0 })
      return (
        <ol>
          {latest.messages.map((message) => (
            <MessageView key={message.id} message={message} />
          ))}
        </ol>
      )
    }
    render(
      <Providers client={client}>
        <Chat />
      </Providers>,
    )
    await waitFor(() => expect(latest!.status).toBe('following'), until)
    const finished = latest!.messages.slice(0, 4).map((message) => message.id)
    const running = `${seeded.executionId}:assistant`
    await seeded.turn.step(4)
    await waitFor(() => expect(renders.get(running)).toBeGreaterThan(1), until)
    seeded.turn.release()
    await waitFor(() => expect(latest!.status).toBe('idle'), until)
    // Each snapshot replaced the whole transcript; the finished turns rendered once all along.
    expect(finished.map((id) => renders.get(id))).toEqual([1, 1, 1, 1])
    expect(renders.get(running)).toBeGreaterThan(2)
  })
})
