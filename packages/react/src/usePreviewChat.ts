import {
  throttleState,
  type PreviewChatSession,
  type SessionState,
  type StateSource,
  type ThreadKey,
} from '@preview-chat/core'
import { QueryClientContext } from '@tanstack/react-query'
import { useContext, useMemo, useRef, useSyncExternalStore } from 'react'
import { usePreviewChatClient } from './PreviewChatProvider'

export interface UsePreviewChatOptions extends ThreadKey {
  /** `false` keeps the session idle: no reads, no push, no requests. Default `true`. */
  enabled?: boolean
  /** The app minted this thread id and knows it is empty: skip the first read. */
  isNew?: boolean
  /** Streamed deltas reach React at most once per frame (default), or per this many ms; `0`: every delta. */
  throttleMs?: number | 'frame'
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

/** The thread's session (shared by every component that follows the same thread) and its view. */
function useSessionView(options: UsePreviewChatOptions): {
  session: PreviewChatSession
  view: StateSource
} {
  const client = usePreviewChatClient()
  const queryClient = useContext(QueryClientContext)
  const { projectId, agentId, threadId, isNew, throttleMs } = options
  const session = client.session({
    projectId,
    agentId,
    threadId,
    ...(isNew !== undefined && { isNew }),
    ...(queryClient && { queryClient }),
  })
  const view = useMemo(
    () => throttleState(session, { throttleMs: throttleMs ?? 'frame' }),
    [session, throttleMs],
  )
  return { session, view }
}

/**
 * Follows one thread: its transcript (recovered after reloads and cuts, live while it streams),
 * its status, the gate, the draft, and the actions. Unmounting stops reading; it never cancels the
 * server's execution.
 */
export function usePreviewChat(options: UsePreviewChatOptions): PreviewChat {
  const { session, view } = useSessionView(options)
  const state = useSyncExternalStore(
    options.enabled === false ? noSubscription : view.subscribe,
    view.getState,
    session.getServerState,
  )
  return useMemo(
    () => ({
      ...state,
      setDraft: session.setDraft,
      submit: session.submit,
      resume: session.resume,
      stop: session.stop,
      refresh: session.refresh,
      clearError: session.clearError,
    }),
    [state, session],
  )
}

/**
 * Subscribes to one slice of a thread's state (e.g. `(s) => s.status`): the component re-renders
 * only when that slice changes, not on every streamed delta. `isEqual` compares slices.
 */
export function usePreviewChatSelector<T>(
  options: UsePreviewChatOptions,
  selector: (state: SessionState) => T,
  isEqual: (a: T, b: T) => boolean = Object.is,
): T {
  const { session, view } = useSessionView(options)
  const memo = useRef<{ state: SessionState; slice: T } | null>(null)
  const select = (state: SessionState): T => {
    const last = memo.current
    if (last?.state === state) return last.slice
    const slice = selector(state)
    const kept = last && isEqual(last.slice, slice) ? last.slice : slice
    memo.current = { state, slice: kept }
    return kept
  }
  return useSyncExternalStore(
    options.enabled === false ? noSubscription : view.subscribe,
    () => select(view.getState()),
    () => select(session.getServerState()),
  )
}
