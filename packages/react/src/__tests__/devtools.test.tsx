import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { describe, expect, it, vi } from 'vitest'
import { PreviewChatDevtools as DevelopmentOnly } from '../devtools'
import { PreviewChatDevtools } from '../devtools/production'
import type { UsePreviewChatOptions } from '../usePreviewChat'
import { createProbe, Providers, setupChat, tabClient, thread } from './harness'

const chat = setupChat({ deltaMs: 2, snapshotMs: 10 })
const until = { timeout: 10_000 }

/** A chat of one thread and the panel, under one provider, as an app mounts them. */
function mountWithDevtools(key: UsePreviewChatOptions, client = tabClient()) {
  const probe = createProbe()
  render(
    <Providers client={client}>
      <probe.Probe {...key} />
      <PreviewChatDevtools initialIsOpen />
    </Providers>,
  )
  return probe
}

const panel = () => screen.getByRole('region', { name: 'preview-chat devtools' })
const sessionOf = (threadId: string) =>
  within(panel()).getByRole('article', { name: `Thread ${threadId}` })
const text = (element: Element | null | undefined) => element?.textContent ?? ''
const actionTypes = (threadId: string) =>
  within(sessionOf(threadId))
    .queryAllByRole('listitem')
    .map((item) => item.querySelector('code')?.textContent)

describe('PreviewChatDevtools', () => {
  it('finds the followed session and lists its actions as they happen', async () => {
    const seeded = await chat.mock.seed.thread({ messages: ['Hello'] })
    const { chat: api } = mountWithDevtools(seeded.key)
    await waitFor(() => expect(api().status).toBe('idle'), until)
    const { threadId } = seeded.key
    await waitFor(() => expect(text(sessionOf(threadId))).toContain('idle'), until)

    act(() => api().setDraft('/long 3'))
    act(() => void api().submit())
    await waitFor(() => expect(api().status).toBe('streaming'), until)
    await waitFor(() => expect(api().status).toBe('idle'), until)

    await waitFor(() => {
      const types = actionTypes(threadId)
      // Newest first: the turn's POST, its events, its end, and the read that confirmed it.
      expect(types).toEqual(expect.arrayContaining(['submit-requested', 'turn-events']))
      expect(types).toContain('stream-ended')
      expect(types).toContain('snapshot')
      expect(types.indexOf('snapshot')).toBeLessThan(types.indexOf('submit-requested'))
    }, until)
    const session = sessionOf(threadId)
    const submitted = within(session).getByText('submit-requested').closest('li')
    expect(text(submitted)).toMatch(/^\d\d:\d\d:\d\d\.\d{3} turn submit-requested the draft → post/)
    expect(text(within(session).getByText('Reads').nextSibling as Element)).toMatch(
      /[1-9]\d* snapshots/,
    )
    expect(text(within(session).getByText('Push').nextSibling as Element)).toMatch(
      /[1-9]\d* messages/,
    )
  })

  it('shows the engine state as JSON and copies it', async () => {
    const writeText = vi.fn(() => Promise.resolve())
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true })
    const key = thread()
    const { chat: api } = mountWithDevtools({ ...key, isNew: true })
    await waitFor(() => expect(api().status).toBe('idle'), until)
    act(() => api().setDraft('kept draft'))
    const session = await waitFor(() => sessionOf(key.threadId), until)

    fireEvent.click(within(session).getByText('Engine state'))
    const json = await within(session).findByLabelText(`Engine state of Thread ${key.threadId}`)
    await waitFor(() => expect(text(json)).toContain('"draft": "kept draft"'), until)
    expect(JSON.parse(json.textContent ?? '')).toMatchObject({ key, active: true })

    fireEvent.click(
      within(session).getByRole('button', {
        name: `Copy the engine state of Thread ${key.threadId}`,
      }),
    )
    await within(session).findByText('Copied')
    expect(JSON.parse((writeText.mock.calls[0] as unknown as [string])[0])).toMatchObject({ key })
  })

  it('opens and closes by its buttons, and says when no session is followed', () => {
    render(
      <Providers client={tabClient()}>
        <PreviewChatDevtools />
      </Providers>,
    )
    const toggle = screen.getByRole('button', { name: 'preview-chat devtools' })
    expect(toggle.getAttribute('aria-expanded')).toBe('false')
    expect(screen.queryByRole('region')).toBeNull()
    fireEvent.click(toggle)
    expect(toggle.getAttribute('aria-expanded')).toBe('true')
    expect(text(panel())).toContain('No session is followed now')
    fireEvent.click(screen.getByRole('button', { name: 'Close preview-chat devtools' }))
    expect(screen.queryByRole('region')).toBeNull()
  })

  it('records from its mount while closed, and keeps the last maxActions', async () => {
    const key = thread()
    const probe = createProbe()
    render(
      <Providers client={tabClient()}>
        <probe.Probe {...key} isNew />
        <PreviewChatDevtools maxActions={4} />
      </Providers>,
    )
    await waitFor(() => expect(probe.chat().status).toBe('idle'), until)
    act(() => probe.chat().setDraft('/long 3'))
    act(() => void probe.chat().submit())
    await waitFor(() => expect(probe.chat().status).toBe('streaming'), until)
    await waitFor(() => expect(probe.chat().status).toBe('idle'), until)
    expect(screen.queryByRole('region')).toBeNull()

    // Opened after the turn: its actions are there, the last four of them.
    fireEvent.click(screen.getByRole('button', { name: 'preview-chat devtools' }))
    await waitFor(() => expect(actionTypes(key.threadId)).toHaveLength(4), until)
    expect(actionTypes(key.threadId)).not.toContain('submit-requested')
    expect(text(sessionOf(key.threadId))).not.toContain('No action since')
  })

  it.each([
    ['bottom-right', { bottom: '8px', right: '8px' }, 'last'],
    ['bottom-left', { bottom: '8px', left: '8px' }, 'last'],
    ['top-right', { top: '8px', right: '8px' }, 'first'],
    ['top-left', { top: '8px', left: '8px' }, 'first'],
  ] as const)('sits in the %s corner, its button at the edge', (position, corner, place) => {
    const { container } = render(
      <Providers client={tabClient()}>
        <PreviewChatDevtools position={position} initialIsOpen />
      </Providers>,
    )
    const root = container.querySelector<HTMLElement>('[data-preview-chat-devtools]')
    expect(root?.style).toMatchObject(corner)
    const other = { top: 'bottom', bottom: 'top', left: 'right', right: 'left' } as const
    for (const side of Object.keys(corner) as (keyof typeof other)[])
      expect(root?.style[other[side]]).toBe('')
    const toggle = screen.getByRole('button', { name: 'preview-chat devtools' })
    expect(place === 'first' ? root?.firstElementChild : root?.lastElementChild).toBe(toggle)
  })

  it('renders nothing from the default entry outside development', () => {
    expect(process.env.NODE_ENV).toBe('test')
    const { container } = render(
      <Providers client={tabClient()}>
        <DevelopmentOnly initialIsOpen />
      </Providers>,
    )
    expect(container.innerHTML).toBe('')
  })
})
