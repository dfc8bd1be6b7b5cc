import { act, render, waitFor } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { shallow } from 'zustand/shallow'
import { usePreviewChatSelector } from '../usePreviewChat'
import type { SessionState } from '../index'
import { Providers, setupChat, tabClient, thread } from './harness'

setupChat({ deltaMs: 0 })

describe('usePreviewChatSelector (built on zustand’s useStore)', () => {
  it('takes a new selector at once, with the state unchanged (issue 11, row f)', async () => {
    const client = tabClient()
    const key = thread()
    const seen: unknown[] = []
    function Slice({ select }: { select: (state: SessionState) => unknown }) {
      const value = usePreviewChatSelector(key, select)
      seen.push(value)
      return <p>{String(value)}</p>
    }
    const view = render(
      <Providers client={client} queryClient={client.queryClient}>
        <Slice select={(s) => s.draft} />
      </Providers>,
    )
    act(() => client.session(key).setDraft('hello'))
    await waitFor(() => expect(client.session(key).getState().status).toBe('idle'))
    expect(seen.at(-1)).toBe('hello')
    view.rerender(
      <Providers client={client} queryClient={client.queryClient}>
        <Slice select={(s) => s.status} />
      </Providers>,
    )
    expect(seen.at(-1)).toBe('idle')
    expect(view.container.textContent).toBe('idle')
  })

  it('re-renders only when its slice changes (isEqual compares slices)', () => {
    const client = tabClient()
    const key = thread()
    const session = client.session(key)
    let renders = 0
    function Length() {
      const length = usePreviewChatSelector({ ...key, throttleMs: 0 }, (s) => s.draft.length > 3)
      renders++
      return <p>{String(length)}</p>
    }
    const view = render(
      <Providers client={client} queryClient={client.queryClient}>
        <Length />
      </Providers>,
    )
    const before = renders
    act(() => session.setDraft('a'))
    act(() => session.setDraft('ab'))
    expect(renders).toBe(before)
    act(() => session.setDraft('abcd'))
    expect(view.container.textContent).toBe('true')
    expect(renders).toBe(before + 1)
  })

  it('keeps the slice it has while isEqual finds a new object the same (no render, no loop)', () => {
    const client = tabClient()
    const key = thread()
    const session = client.session(key)
    const slices: object[] = []
    function Summary() {
      const slice = usePreviewChatSelector(
        { ...key, throttleMs: 0 },
        (s) => ({ status: s.status, long: s.draft.length > 3 }),
        shallow,
      )
      slices.push(slice)
      return <p>{`${slice.status} ${String(slice.long)}`}</p>
    }
    const view = render(
      <Providers client={client} queryClient={client.queryClient}>
        <Summary />
      </Providers>,
    )
    const first = slices.at(-1)
    const before = slices.length
    act(() => session.setDraft('a'))
    act(() => session.setDraft('ab'))
    // A new object every call, equal by `shallow`: the same slice, and no re-render.
    expect(slices.length).toBe(before)
    act(() => session.setDraft('abcd'))
    expect(slices.length).toBe(before + 1)
    expect(slices.at(-1)).not.toBe(first)
    expect(view.container.textContent).toMatch(/ true$/)
  })

  // A selector that builds its slice is called more than once per render; each call must give
  // the same value while the state is the same, or React re-renders until it gives up.
  it.each([
    {
      name: 'a new object, compared with Object.is',
      select: (s: SessionState) => ({ status: s.status, draft: s.draft }),
      isEqual: Object.is,
      strict: false,
    },
    {
      name: 'a mapped array, compared with Object.is',
      select: (s: SessionState) => [s.status, s.draft],
      isEqual: Object.is,
      strict: false,
    },
    {
      name: 'a nested object, compared with shallow, under StrictMode',
      select: (s: SessionState) => ({ info: { status: s.status, draft: s.draft } }),
      isEqual: shallow,
      strict: true,
    },
  ])('renders a slice built per call without looping: $name', ({ select, isEqual, strict }) => {
    const client = tabClient()
    const key = thread()
    const session = client.session(key)
    let renders = 0
    function Built() {
      const slice = usePreviewChatSelector({ ...key, throttleMs: 0 }, select, isEqual)
      renders++
      return <p>{JSON.stringify(slice)}</p>
    }
    const view = render(
      <Providers client={client} queryClient={client.queryClient} strict={strict}>
        <Built />
      </Providers>,
    )
    // One render (two under StrictMode); the old hook gave the same.
    expect(renders).toBe(strict ? 2 : 1)
    act(() => session.setDraft('typed'))
    expect(view.container.textContent).toContain('typed')
    expect(renders).toBeLessThanOrEqual(strict ? 4 : 2)
  })
})
