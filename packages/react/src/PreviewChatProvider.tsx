import { PreviewChatError, type PreviewChatClient } from '@preview-chat/core'
import { explain } from '@preview-chat/core/internal'
import { createContext, useContext, type ReactNode } from 'react'

const PreviewChatContext = createContext<PreviewChatClient | null>(null)

export interface PreviewChatProviderProps {
  /** Made once, outside React: `createPreviewChatClient({ baseUrl, scope: userId, … })`. */
  client: PreviewChatClient
  children?: ReactNode
}

/**
 * Makes a preview-chat client available to `usePreviewChat`. Recorded history is cached in the
 * app's TanStack Query client when a `QueryClientProvider` is above this one, else in the
 * client's own.
 */
export function PreviewChatProvider({ client, children }: PreviewChatProviderProps) {
  return <PreviewChatContext.Provider value={client}>{children}</PreviewChatContext.Provider>
}

/** The client of the nearest `PreviewChatProvider`. */
export function usePreviewChatClient(): PreviewChatClient {
  const client = useContext(PreviewChatContext)
  if (!client) {
    throw new PreviewChatError(
      'invalid_request',
      `usePreviewChat needs a PreviewChatProvider above it.${explain('no-provider')}`,
    )
  }
  return client
}
