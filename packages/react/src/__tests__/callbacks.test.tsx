/**
 * The hook as a UI kit uses it: `submit(text)` from a composer that owns its text, `canSend` for
 * its send button, and `onFinish` / `onError` once per turn the component saw running.
 */
import { act, render, waitFor } from '@testing-library/react'
import { describe, expect, it, vi } from 'vitest'
import type { TurnEnding } from '@preview-chat/core'
import { usePreviewChat } from '../usePreviewChat'
import { createProbe, Providers, setupChat, tabClient, thread } from './harness'

const chat = setupChat({ deltaMs: 2, snapshotMs: 10 })
const until = { timeout: 10_000 }

describe('usePreviewChat for a UI kit [R-TURN-ENDING]', () => {
  it('submit(text) sends that text; canSend says the thread may take a message, draft or not', async () => {
    const key = thread()
    const onFinish = vi.fn<(ending: TurnEnding) => void>()
    const onError = vi.fn()
    const { Probe, chat: api } = createProbe()
    render(
      <Providers client={tabClient()}>
        <Probe {...key} onFinish={onFinish} onError={onError} />
      </Providers>,
    )
    await waitFor(() => expect(api().status).toBe('idle'), until)
    expect(api()).toMatchObject({ canSend: true, canSubmit: false })
    let sent: Promise<unknown> = Promise.resolve()
    act(() => {
      sent = api().submit('hello from the composer')
    })
    expect(api().canSend).toBe(false)
    expect(await sent).toMatchObject({ outcome: 'accepted' })
    await waitFor(() => expect(onFinish).toHaveBeenCalledTimes(1), until)
    expect(onFinish.mock.calls[0]![0]).toMatchObject({
      status: 'success',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hello from the composer' }] },
        { role: 'assistant' },
      ],
    })
    expect(onError).not.toHaveBeenCalled()
    await act(() => api().refresh())
    expect(onFinish).toHaveBeenCalledTimes(1)
    expect(api()).toMatchObject({ canSend: true, draft: '' })
  })

  it('onError for a turn that ends in error, with onFinish', async () => {
    const key = thread()
    const onFinish = vi.fn()
    const onError = vi.fn()
    const { Probe, chat: api } = createProbe()
    render(
      <Providers client={tabClient()}>
        <Probe {...key} onFinish={onFinish} onError={onError} />
      </Providers>,
    )
    await waitFor(() => expect(api().status).toBe('idle'), until)
    await act(() => api().submit('/fail'))
    await waitFor(() => expect(onError).toHaveBeenCalledTimes(1), until)
    expect(onError.mock.calls[0]![0]).toMatchObject({ code: 'agent_error' })
    expect(onFinish).toHaveBeenCalledWith(expect.objectContaining({ status: 'error' }))
  })

  it('an onFinish that throws does not keep onError from hearing of the failure; each throw is reported', async () => {
    const key = thread()
    const warnings: string[] = []
    const onError = vi.fn()
    const { Probe, chat: api } = createProbe()
    render(
      <Providers
        client={tabClient('alice', { onWarning: (message) => void warnings.push(message) })}
      >
        <Probe
          {...key}
          onFinish={() => {
            throw new Error('the app failed to render its toast')
          }}
          onError={(error) => {
            onError(error)
            throw new Error('the app failed to report it')
          }}
        />
      </Providers>,
    )
    await waitFor(() => expect(api().status).toBe('idle'), until)
    await act(() => api().submit('/fail'))
    await waitFor(() => expect(onError).toHaveBeenCalledTimes(1), until)
    // Both throws are reported, neither hides the other.
    expect(warnings.sort()).toEqual([
      expect.stringContaining('the app failed to render its toast'),
      expect.stringContaining('the app failed to report it'),
    ])
  })

  it('no callback for a turn that had ended before the component mounted', async () => {
    const key = thread()
    const first = createProbe()
    const view = render(
      <Providers client={tabClient()}>
        <first.Probe {...key} />
      </Providers>,
    )
    await waitFor(() => expect(first.chat().status).toBe('idle'), until)
    await act(() => first.chat().submit('hello'))
    await waitFor(
      () => expect(first.chat().messages.at(-1)?.executionStatus).toBe('success'),
      until,
    )
    view.unmount()
    const onFinish = vi.fn()
    function Late() {
      const late = usePreviewChat({ ...key, onFinish })
      return <p data-testid="late">{late.status}</p>
    }
    const again = render(
      <Providers client={tabClient()}>
        <Late />
      </Providers>,
    )
    await waitFor(() => expect(again.getByTestId('late').textContent).toBe('idle'), until)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(onFinish).not.toHaveBeenCalled()
    expect(chat.mock.backend.inspect.history(key.threadId)?.messages).toHaveLength(2)
  })
})
