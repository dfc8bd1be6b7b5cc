import { useAuiState } from '@assistant-ui/react'
import { explain } from '@preview-chat/core/internal'
import { PreviewChatError, type PreviewChat } from '@preview-chat/react'

/**
 * What `usePreviewChatRuntime` hands its components through the kit's thread `extras`: the
 * thread's session (state and actions, as `usePreviewChat` returns it) and `answer`, the one way
 * a tool UI answers a suspension and learns whether that worked (the kit's own `resume` returns
 * nothing). Branded with `Symbol.for`, so that two copies of this package know each other's.
 */
export interface PreviewChatExtras {
  chat: PreviewChat
  /**
   * Answers the suspended tool call `toolCallId` with `data`. Rejects with a
   * `PreviewChatNotSentError` when nothing was sent: no open suspension holds that call (`code`
   * `invalid_request`), a turn runs (`busy`), or the server refused (the refusal's code).
   */
  answer(toolCallId: string, data: unknown): Promise<void>
}

const brand = Symbol.for('@preview-chat/assistant-ui/extras')

/** Marks `extras` as this package's (the kit passes the value on as it is). */
export function provideExtras(extras: PreviewChatExtras): PreviewChatExtras {
  return Object.defineProperty(extras, brand, { value: true, enumerable: false })
}

/** The extras of a thread this package's runtime backs, else `undefined`. */
export function readExtras(extras: unknown): PreviewChatExtras | undefined {
  return isExtras(extras) ? extras : undefined
}

const isExtras = (value: unknown): value is PreviewChatExtras =>
  typeof value === 'object' && value !== null && brand in value

/**
 * The open thread's session, read from inside `<AssistantRuntimeProvider runtime={…}>` whose
 * runtime `usePreviewChatRuntime` made: status, `error`, `readError`, the gate, the actions.
 */
export function usePreviewChatExtras(): PreviewChatExtras {
  const extras = readExtras(useAuiState((s) => s.thread.extras))
  if (!extras)
    throw new PreviewChatError(
      'invalid_request',
      `This component reads the thread of usePreviewChatRuntime: put it inside <AssistantRuntimeProvider runtime={usePreviewChatRuntime(…)}>.${explain('no-runtime')}`,
    )
  return extras
}
