import { noThread, PreviewChatError, type SessionActions } from '@preview-chat/core'
import type {
  PreviewChatSession,
  ReadonlyStore,
  SessionState,
  ThreadKey,
  TurnEnding,
} from '@preview-chat/core'
import { QueryClientContext } from '@tanstack/react-query'
import { useContext, useEffect, useMemo, useRef } from 'react'
import { useStore } from 'zustand'
import { usePreviewChatClient } from './PreviewChatProvider'

export interface UsePreviewChatOptions extends ThreadKey {
  /**
   * `false` keeps the session idle: no reads, no push, no requests. Default `true`. Disabled, a
   * thread id no session can have (`''` until the app has one) is no error: the hook shows
   * `noThreadState` (core's `noThread`), and its actions answer `invalid_request` without sending
   * anything.
   */
  enabled?: boolean
  /** The app minted this thread id and knows it is empty: skip the first read. */
  isNew?: boolean
  /**
   * Streamed deltas reach React at most once per frame (default), or per this many ms; `0`: every
   * delta. Through the client's `throttle` (a minimal client without one passes every change).
   */
  throttleMs?: number | 'frame'
  /**
   * Once per turn this tab saw running — its own, another tab's, one recovered after a reload —
   * when the record shows how it ended (`success`, `error`, `cancelled`, `interrupted`,
   * `suspended`); never for a turn that had ended before the component mounted. Every open tab
   * hears it: `ending.origin` (`own`, `followed`, `recovered`) says whose turn it was.
   */
  onFinish?: (ending: TurnEnding) => void
  /** Once per such turn that ended in `error`, with the recorded failure (`agent_error`). */
  onError?: (error: PreviewChatError, ending: TurnEnding) => void
}

/** What `usePreviewChat` returns: the session's state and its actions (stable functions). */
export interface PreviewChat extends SessionState {
  setDraft: PreviewChatSession['setDraft']
  submit: PreviewChatSession['submit']
  resume: PreviewChatSession['resume']
  stop: PreviewChatSession['stop']
  refresh: PreviewChatSession['refresh']
  clearError: PreviewChatSession['clearError']
}

const noSubscription = () => () => {}

/**
 * The thread's first read, started at the first render that asks for the session rather than
 * when React subscribes to it (a passive effect, after the commit): what `client.prefetch` does,
 * at the earliest moment the hook knows the thread (issue 30). The session takes it as its first
 * read; the reducer's `prefetch-requested` does nothing once a read is on its way or answered, so
 * StrictMode's second render, or a second component, asks nothing more. Only before the session is
 * followed (not on every render while it streams), and only in a browser: a server render runs no
 * effects, and nothing would listen.
 */
function startFirstRead(session: PreviewChatSession): void {
  if (typeof window !== 'undefined' && !session.listened) void session.prefetch()
}

/**
 * The thread's session (shared by every component that follows the same thread) and the
 * frame-throttled zustand store React reads it through. Disabled with an id no session can
 * have (`threadId: ''` until the app has one), there is no session: core's `noThread`.
 */
function useSessionStore(options: UsePreviewChatOptions): {
  session: PreviewChatSession | null
  store: ReadonlyStore<SessionState>
  actions: SessionActions
} {
  const client = usePreviewChatClient()
  const queryClient = useContext(QueryClientContext)
  const { projectId, agentId, threadId, isNew, throttleMs, enabled } = options
  let session: PreviewChatSession | null = null
  let refused = ''
  try {
    session = client.session({
      projectId,
      agentId,
      threadId,
      ...(isNew !== undefined && { isNew }),
      ...(queryClient && { queryClient }),
    })
  } catch (error) {
    const idRefused = PreviewChatError.isInstance(error) && error.code === 'invalid_request'
    if (enabled !== false || !idRefused) throw error
    refused = error.message
  }
  if (session && enabled !== false) startFirstRead(session)
  const view = useMemo(() => {
    if (!session) return noThread(new PreviewChatError('invalid_request', refused))
    const throttled = client.view(session, throttleMs)
    // Disabled: read the state, never subscribe (subscribing is what starts a session).
    const store = enabled === false ? { ...throttled, subscribe: noSubscription } : throttled
    return { store, actions: session }
  }, [session, refused, throttleMs, enabled, client])
  return { session, ...view }
}

/**
 * Follows one thread: its transcript (recovered after reloads and cuts, live while it streams),
 * its status, the gate, the draft, and the actions. Unmounting stops reading; it never cancels the
 * server's execution.
 */
export function usePreviewChat(options: UsePreviewChatOptions): PreviewChat {
  const { session, store, actions } = useSessionStore(options)
  const state = useStore(store)
  useTurnEndings(session, options)
  return useMemo(
    () => ({
      ...state,
      setDraft: actions.setDraft,
      submit: actions.submit,
      resume: actions.resume,
      stop: actions.stop,
      refresh: actions.refresh,
      clearError: actions.clearError,
    }),
    [state, actions],
  )
}

/** Calls the latest `onFinish`/`onError` for each ending, while the hook is mounted and enabled. */
function useTurnEndings(session: PreviewChatSession | null, options: UsePreviewChatOptions): void {
  const callbacks = useRef(options)
  useEffect(() => {
    callbacks.current = options
  })
  const listening = options.enabled !== false && (options.onFinish ?? options.onError) !== undefined
  useEffect(() => {
    if (!listening || !session) return
    // Two listeners: each is called whatever the other does, and the session reports what each throws.
    const stopFinish = session.onTurnEnd((ending) => callbacks.current.onFinish?.(ending))
    const stopError = session.onTurnEnd((ending) => {
      if (ending.error) callbacks.current.onError?.(ending.error, ending)
    })
    return () => {
      stopFinish()
      stopError()
    }
  }, [session, listening])
}

/**
 * Subscribes to one slice of a thread's state (e.g. `(s) => s.status`): the component re-renders
 * only when that slice changes, not on every streamed delta. `isEqual` compares slices (e.g.
 * zustand's `shallow`). Built on zustand's `useStore`, so a new selector takes effect at once.
 */
export function usePreviewChatSelector<T>(
  options: UsePreviewChatOptions,
  selector: (state: SessionState) => T,
  isEqual: (a: T, b: T) => boolean = Object.is,
): T {
  const { store } = useSessionStore(options)
  return useStore(store, useEqualSlice(selector, isEqual))
}

/**
 * The selector, memoised as zustand's `useStoreWithEqualityFn` memoises it: the same state and
 * selector give the slice they gave (React calls `getSnapshot` more than once per render and
 * needs the same value), and a new slice that `isEqual` finds the same as the last one is the
 * last one, so React keeps the render it has. Needs no `use-sync-external-store` shim: React 18+
 * has `useSyncExternalStore`.
 */
function useEqualSlice<T>(
  selector: (state: SessionState) => T,
  isEqual: (a: T, b: T) => boolean,
): (state: SessionState) => T {
  const last = useRef<{
    state: SessionState
    selector: (state: SessionState) => T
    slice: T
  } | null>(null)
  return (state) => {
    const memo = last.current
    if (memo?.state === state && memo.selector === selector) return memo.slice
    const next = selector(state)
    const slice = memo && isEqual(memo.slice, next) ? memo.slice : next
    last.current = { state, selector, slice }
    return slice
  }
}
