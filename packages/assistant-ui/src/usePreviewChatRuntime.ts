import {
  useExternalStoreRuntime,
  type AppendMessage,
  type AssistantRuntime,
  type ExternalStoreAdapter,
  type ExternalStoreThreadListAdapter,
} from '@assistant-ui/react'
import {
  PreviewChatError,
  usePreviewChat,
  type Message,
  type PreviewChat,
  type UsePreviewChatOptions,
} from '@preview-chat/react'
import { explain } from '@preview-chat/core/internal'
import { useEffect, useMemo, useRef } from 'react'
import { convertMessage } from './convert'
import { provideExtras, type PreviewChatExtras } from './extras'
import { PreviewChatNotSentError } from './notSentError'
import { appendedText, type PreviewChatQueue } from './queueAdapter'
import { useComposerDraft } from './useComposerDraft'

export interface UsePreviewChatRuntimeOptions extends Pick<
  UsePreviewChatOptions,
  'projectId' | 'agentId' | 'threadId' | 'isNew' | 'throttleMs' | 'onFinish' | 'onError'
> {
  /** assistant-ui's thread-list adapter, passed through: the app owns its list of threads. */
  threadList?: ExternalStoreThreadListAdapter
  /**
   * `previewChatQueue` of `@preview-chat/assistant-ui/queue`, with a client made with `queue()`:
   * assistant-ui gets the session's queue (`capabilities.queue`, `ComposerPrimitive.Queue`).
   * Without it the queue still works (Send queues while a turn runs) and `chat.queue` is the app's
   * to show; this package's bundle then holds none of the mapping.
   */
  queue?: PreviewChatQueue
}

/**
 * An assistant-ui runtime (for `<AssistantRuntimeProvider runtime={…}>`) over one preview-chat
 * thread: `useExternalStoreRuntime` fed by `usePreviewChat`. The record's messages are converted
 * part by part (`convert.ts`); the kit's composer holds the per-thread draft (`useComposerDraft`);
 * a client made with `queue()` gives the kit its queue (`queueAdapter.ts`).
 */
export function usePreviewChatRuntime(options: UsePreviewChatRuntimeOptions): AssistantRuntime {
  const { threadList, queue: mapQueue, ...chatOptions } = options
  const chat = usePreviewChat(chatOptions)
  const latest = useRef<{ chat: PreviewChat; runtime?: AssistantRuntime }>({ chat })
  useEffect(() => {
    latest.current = { chat, runtime }
  })
  const current = useMemo(() => () => latest.current.chat, [])
  const actions = useMemo(() => adapterActions(current), [current])
  // The kit's queue, while the app maps it and the session has one (its composer gets back a
  // message the session refused).
  const { queue: queued } = chat
  const queue = useMemo(
    () => queued && mapQueue?.(queued, current, () => latest.current.runtime),
    [mapQueue, queued, current],
  )
  // The session, for this package's components (`PreviewChatStatus`, `PreviewChatToolCall`…).
  const extras = useMemo(() => provideExtras({ chat, answer: actions.answer }), [chat, actions])
  const runtime = useExternalStoreRuntime<Message>({
    messages: chat.messages,
    convertMessage,
    isRunning: chat.isRunning,
    // The composer stays editable while a turn runs; only sending waits (the session's gate),
    // unless the client has a queue: a message sent then waits in it (`canSend` says so).
    isSendDisabled: !chat.canSend,
    // Nothing is known of the thread yet: the engine's `loaded` (true once a read answered or
    // found no thread, or a recorded transcript is shown: the cache's, a restored one, a new thread).
    isLoading: !chat.loaded,
    onNew: actions.onNew,
    // Without a way to stop here (`canStop`), the kit shows no working Stop.
    ...(chat.canStop && { onCancel: actions.onCancel }),
    onRefetchThread: actions.onRefetchThread,
    onResumeToolCall: actions.onResumeToolCall,
    onAddToolResult: actions.onAddToolResult,
    ...(threadList && { adapters: { threadList } }),
    ...(queue && { queue }),
    extras,
  })
  useComposerDraft(runtime, chat, options.threadId)
  return runtime
}

/** The adapter's callbacks, stable, each reading the chat as it is when called (exported for tests). */
export function adapterActions(current: () => PreviewChat) {
  /**
   * Answers the suspended tool call `toolCallId` with `data`. What cannot be sent rejects, so that
   * the button that asked can say so: a call no open suspension holds (answered already, another
   * thread's, a stale render) as `invalid_request`, a refused resume with its code (`busy`…).
   */
  const answer = async (toolCallId: string, data: unknown): Promise<void> => {
    const chat = current()
    const suspension = chat.openSuspensions.find((s) => s.toolCallId === toolCallId)
    if (!suspension) {
      const error = new PreviewChatError(
        'invalid_request',
        `Tool call ${toolCallId} is not waiting for an answer in this thread (answered already, or not loaded yet); nothing was sent.${explain('not-waiting')}`,
      )
      throw new PreviewChatNotSentError({ outcome: 'failed', error })
    }
    const result = await chat.resume(suspension, data)
    if (result.outcome !== 'accepted') throw new PreviewChatNotSentError(result)
  }
  return {
    answer,
    /**
     * The kit's composer sent: one `submit(text)`; a refusal hands the text back to it, as a
     * `PreviewChatNotSentError` that keeps the refusal's `code` and its `PreviewChatError`.
     */
    onNew: async (message: AppendMessage): Promise<void> => {
      const result = await current().submit(appendedText(message))
      if (result.outcome === 'failed' || result.outcome === 'busy')
        throw new PreviewChatNotSentError(result)
    },
    onCancel: async (): Promise<void> => {
      await current().stop()
    },
    onRefetchThread: (): Promise<void> => current().refresh(),
    onResumeToolCall: ({ toolCallId, payload }: { toolCallId: string; payload: unknown }) =>
      answer(toolCallId, payload),
    onAddToolResult: ({ toolCallId, result }: { toolCallId: string; result: unknown }) =>
      answer(toolCallId, result),
  } satisfies Partial<ExternalStoreAdapter<Message>> & Pick<PreviewChatExtras, 'answer'>
}
