import {
  createPreviewChatClient,
  ssePush,
  type PreviewChatSession,
  type SessionState,
  type ThreadKey,
  type PushAdapter,
} from '@preview-chat/core'

/** A real core client against the mocked backend, as a consumer's test would build it. */
export function createClient(user = 'alice', push: PushAdapter | false = ssePush()) {
  return createPreviewChatClient({
    baseUrl: 'http://localhost/rest',
    push,
    headers: { authorization: `Bearer ${user}` },
    storage: null,
    resumeSignal: () => () => {},
    retry: { baseMs: 5, maxMs: 20 },
    poll: { baseMs: 5, maxMs: 20 },
    lingerMs: 0,
  })
}

/** Follows one thread and records every state it passes through. */
export function follow(session: PreviewChatSession) {
  const states: SessionState[] = [session.getState()]
  const unsubscribe = session.subscribe((state) => states.push(state))
  return {
    states,
    unsubscribe,
    /** The statuses passed through, without repeats. */
    statuses: () =>
      states.map((s) => s.status).filter((status, i, all) => i === 0 || all[i - 1] !== status),
    /** Resolves once `predicate` holds (checked on every change); rejects after `timeoutMs`. */
    until(predicate: (state: SessionState) => boolean, what: string, timeoutMs = 2000) {
      return new Promise<SessionState>((resolve, reject) => {
        if (predicate(session.getState())) {
          resolve(session.getState())
          return
        }
        const timer = setTimeout(() => {
          stop()
          reject(
            new Error(
              `Timed out waiting for ${what}; statuses: ${states.map((s) => s.status).join(' → ')}`,
            ),
          )
        }, timeoutMs)
        const stop = session.subscribe((state) => {
          if (!predicate(state)) return
          clearTimeout(timer)
          stop()
          resolve(state)
        })
      })
    },
  }
}

export const newThread = (): ThreadKey => ({
  projectId: 'demo-project',
  agentId: 'demo-agent',
  threadId: crypto.randomUUID(),
})

/** The text of a message's text parts. */
export const textOf = (
  message: { content: readonly { type: string; text?: string }[] } | undefined,
) =>
  (message?.content ?? [])
    .filter((part) => part.type === 'text')
    .map((part) => part.text ?? '')
    .join('')
