/**
 * What stands for a session where there can be none: a disabled hook before the app has a thread
 * id, or one whose thread id no session can have. It follows nothing and sends nothing.
 */
import { initialEngineState } from '../engine/reduce'
import { selectSessionState, type SessionState } from '../engine/select'
import type { PreviewChatError } from '../wire/contract/errors'
import type { ReadonlyStore } from './context'
import type { PreviewChatSession } from './session'

/** A session's actions, as a UI calls them. */
export type SessionActions = Pick<
  PreviewChatSession,
  'setDraft' | 'submit' | 'resume' | 'stop' | 'refresh' | 'clearError'
>

/**
 * The state of a thread no session follows: what a disabled hook shows before the app has a
 * thread id (`enabled: false`, `threadId: ''`). The engine's own first state: `recovering`, empty,
 * nothing can be sent.
 */
export const noThreadState: SessionState = selectSessionState(
  initialEngineState({ key: { projectId: '', agentId: '', threadId: '' }, tab: '' }),
)

/**
 * What stands for a session where there can be none (a disabled hook whose thread id no session
 * can have): `noThreadState`, never changing, and actions that send nothing, submits and resumes
 * answered with `refusal` (the id's `invalid_request`), a Stop with `cancelRequested: false`.
 */
export function noThread(refusal: PreviewChatError): {
  store: ReadonlyStore<SessionState>
  actions: SessionActions
} {
  const failed = () => Promise.resolve({ outcome: 'failed' as const, error: refusal })
  return {
    store: {
      getState: () => noThreadState,
      getInitialState: () => noThreadState,
      subscribe: () => () => {},
    },
    actions: {
      setDraft: () => {},
      submit: failed,
      resume: failed,
      stop: () => Promise.resolve({ cancelRequested: false }),
      refresh: () => Promise.resolve(),
      clearError: () => {},
    },
  }
}
