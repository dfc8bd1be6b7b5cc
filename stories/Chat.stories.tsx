// The story of @preview-chat/msw's README, "Storybook" (checked verbatim by the kit's
// storybook.readme test), run with the others by `pnpm test:stories`.
// #region example: storybookStory
import type { SeededRunningTurn } from '@preview-chat/msw'
import { previewChatOf, type PreviewChatParameters } from '@preview-chat/msw/storybook'
import { createPreviewChatClient, ssePush, PreviewChatProvider } from '@preview-chat/react'
import type { Meta, StoryObj } from '@storybook/react-vite'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useState, type ReactNode } from 'react'
import { expect, waitFor, within } from 'storybook/test'
// Yours: usePreviewChat({ projectId: 'demo-project', agentId: 'demo-agent', threadId }), the
// mock's default ids (or pass `projectId` and `agentId` to the loader).
import { Chat } from './Chat'

/**
 * A client per story: no credentials (the mock's user answers), push over SSE, no tab relay,
 * and sessions that close as the story unmounts, so none reads from the next story's backend.
 */
function Providers({ children }: { children: ReactNode }) {
  const [clients] = useState(() => ({
    client: createPreviewChatClient({
      baseUrl: '/rest',
      push: ssePush(),
      relay: false,
      lingerMs: 0,
    }),
    queryClient: new QueryClient(),
  }))
  return (
    <QueryClientProvider client={clients.queryClient}>
      <PreviewChatProvider client={clients.client}>{children}</PreviewChatProvider>
    </QueryClientProvider>
  )
}

const meta = { title: 'Example/Chat' } satisfies Meta
export default meta

export const FollowingARunningTurn: StoryObj<typeof meta> = {
  parameters: {
    previewChat: {
      // "Another tab" started a turn: held after two steps, until the play function lets go.
      setup: (mock) => mock.seed.runningTurn({ message: '/long 6', steps: 2 }),
    } satisfies PreviewChatParameters<SeededRunningTurn>,
  },
  render: (_args, context) => (
    <Providers>
      <Chat threadId={previewChatOf<SeededRunningTurn>(context).setup.key.threadId} />
    </Providers>
  ),
  play: async ({ canvasElement, loaded }) => {
    const { mock, setup } = previewChatOf<SeededRunningTurn>({ loaded })
    const canvas = within(canvasElement)
    await canvas.findByText(/delta 2\./)
    setup.turn.release()
    await waitFor(() => expect(canvas.getByText(/delta 6\./)).toBeInTheDocument())
    await waitFor(() => expect(mock.backend.inspect.running()).toEqual([]))
  },
}
// #endregion
