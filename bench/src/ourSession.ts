import { createPreviewChatClient, type Message } from '@preview-chat/core'
import { emptyHistory, json, key } from './streams'

/**
 * A real `createPreviewChatClient` session whose `fetch` answers the POST with `turn` and every
 * history read with `history`: bytes in, session state out, through the same code an app runs.
 */
export function ourSession(
  turn: () => ReadableStream<Uint8Array>,
  options: { history?: Message[]; isNew?: boolean } = {},
) {
  const history = { ...emptyHistory, messages: options.history ?? [] }
  const client = createPreviewChatClient({
    push: false,
    relay: false,
    storage: null,
    resumeSignal: () => () => {},
    fetch: async (_input, init) =>
      init?.method === 'POST'
        ? new Response(turn(), { headers: { 'content-type': 'text/event-stream' } })
        : json({ data: history }),
  })
  const session = client.session({ ...key, isNew: options.isNew ?? !options.history })
  return { client, session, queryKey: client.queryKey(key) }
}

/**
 * Sends one message and resolves when the turn's terminal event has been applied, with the
 * answer's text. A subscriber is attached (as a UI would be), so the session derives its public
 * state on every change.
 */
export async function runTurn(session: ReturnType<typeof ourSession>['session']): Promise<string> {
  return (await prepareTurn(session)).run()
}

/**
 * `runTurn` in two steps: `prepareTurn` subscribes and does the first read (untimed); `run` sends
 * the message and resolves with the answer's text once the terminal event is applied.
 */
export async function prepareTurn(session: ReturnType<typeof ourSession>['session']) {
  let finish!: () => void
  const finished = new Promise<void>((resolve) => (finish = resolve))
  const unsubscribe = session.subscribe(() => {
    if (session.getEngineState().live?.ended) finish()
  })
  if (session.getState().status !== 'idle') await session.refresh()
  return {
    async run(): Promise<string> {
      session.setDraft('hello')
      const result = await session.submit()
      if (result.outcome !== 'accepted')
        throw new Error(`the turn was not accepted: ${result.outcome}`)
      await finished
      const live = session.getEngineState().live
      unsubscribe()
      session.dispose()
      const part = live?.assistant.content[0]
      return part?.type === 'text' ? part.text : ''
    },
  }
}
