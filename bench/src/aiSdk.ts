import {
  parseJsonEventStream,
  readUIMessageStream,
  uiMessageChunkSchema,
  type UIMessage,
  type UIMessageChunk,
} from 'ai'

/**
 * What `DefaultChatTransport` + `useChat` do with a response body, minus React: the UI message
 * stream parsed and validated, folded into messages; resolves with the last one.
 */
export async function readWithAiSdk(
  body: ReadableStream<Uint8Array>,
): Promise<UIMessage | undefined> {
  const chunks = parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream<
      { success: boolean; value?: UIMessageChunk; error?: unknown },
      UIMessageChunk
    >({
      transform(part, controller) {
        if (!part.success) throw part.error
        controller.enqueue(part.value as UIMessageChunk)
      },
    }),
  )
  let last: UIMessage | undefined
  for await (const message of readUIMessageStream({ stream: chunks })) last = message
  return last
}

/** The text of a UI message's first text part. */
export function uiMessageText(message: UIMessage | undefined): string {
  const part = message?.parts.find((p) => p.type === 'text')
  return part?.type === 'text' ? part.text : ''
}
