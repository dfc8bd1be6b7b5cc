import {
  FetchStreamTransport,
  MessageTupleManager,
  StreamManager,
} from '@langchain/langgraph-sdk/ui'

type Values = { messages?: { type?: string; content?: unknown }[] }

/**
 * What LangGraph's `useStream` does with a custom transport (`useStreamCustom`), minus React:
 * `FetchStreamTransport` (its SSE decoder, JSON per event) into a `StreamManager` with its
 * `MessageTupleManager` (each token becomes an `AIMessageChunk`, concatenated), one subscriber
 * as `useSyncExternalStore` would be. `throttle` is the hook's option of that name.
 */
export function langGraphReader(
  body: () => ReadableStream<Uint8Array>,
  throttle: number | false = false,
) {
  const manager = new StreamManager(new MessageTupleManager(), { throttle })
  let notified = 0
  const unsubscribe = manager.subscribe(() => void notified++)
  const transport = new FetchStreamTransport({
    apiUrl: 'http://localhost/api/stream',
    fetch: async () => new Response(body(), { headers: { 'content-type': 'text/event-stream' } }),
  })
  return {
    async read(): Promise<string> {
      await manager.start(
        (signal) =>
          transport.stream({
            input: { messages: [] },
            context: undefined,
            command: undefined,
            signal,
          }) as never,
        {
          getMessages: (values: Values) => values.messages ?? [],
          setMessages: (values: Values, messages: Values['messages']) => ({ ...values, messages }),
          initialValues: {},
          callbacks: {},
        } as never,
      )
      unsubscribe()
      return langGraphText(manager.values as Values | null)
    },
    notified: () => notified,
  }
}

/** The text of the last AI message of LangGraph values. */
export function langGraphText(values: Values | null | undefined): string {
  const last = values?.messages?.at(-1)
  return last?.type === 'ai' && typeof last.content === 'string' ? last.content : ''
}
