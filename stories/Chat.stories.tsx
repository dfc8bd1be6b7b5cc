// The stories of @preview-chat/msw's README, "Storybook" (each region checked verbatim by the
// kit's storybook.readme test), run with the others by `pnpm test:stories`.
// #region example: storybookStory
import type { SeededRunningTurn, SeededThread, TurnGate } from '@preview-chat/msw'
import {
  previewChatOf,
  previewChatWorker,
  type PreviewChatParameters,
} from '@preview-chat/msw/storybook'
import { createPreviewChatClient, ssePush, PreviewChatProvider } from '@preview-chat/react'
import type { Meta, StoryObj } from '@storybook/react-vite'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useState, type ReactNode } from 'react'
import { expect, userEvent, waitFor, within } from 'storybook/test'
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

// #region example: storybookFailingReads
/** Every read fails for as long as the story runs: the client's retries (~0.5 s on) fail too. */
export const ReadsKeepFailing: StoryObj<typeof meta> = {
  parameters: {
    previewChat: {
      setup: async (mock) => {
        const seeded = await mock.seed.thread({ messages: ['Hello'] })
        mock.failNextReads(Infinity, { status: 503 }) // not 1: the retry would heal the story
        return seeded
      },
    } satisfies PreviewChatParameters<SeededThread>,
  },
  render: (_args, context) => (
    <Providers>
      <Chat threadId={previewChatOf<SeededThread>(context).setup.key.threadId} />
    </Providers>
  ),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    const worker = await previewChatWorker()
    let reads = 0 // history reads answered (all failed) since the play began
    const onResponse = ({ request }: { request: Request }) => {
      if (new URL(request.url).pathname.endsWith('/messages')) reads += 1
    }
    worker.events.on('response:mocked', onResponse)
    await canvas.findByRole('alert')
    // Two reads answered: at least one was the client's retry (~0.5 s on), and it failed too.
    await waitFor(() => expect(reads).toBeGreaterThanOrEqual(2), { timeout: 5000 })
    worker.events.removeListener('response:mocked', onResponse)
    await expect(canvas.getByRole('alert')).toBeInTheDocument()
  },
}
// #endregion

// #region example: storybookStreaming
/** "This tab is streaming": the page's own turn, held after two steps until the play lets go. */
export const ThisTabIsStreaming: StoryObj<typeof meta> = {
  parameters: {
    previewChat: {
      setup: (mock) => ({ turn: mock.holdTurns(), threadId: crypto.randomUUID() }),
    } satisfies PreviewChatParameters<{ turn: TurnGate; threadId: string }>,
  },
  render: (_args, context) => (
    <Providers>
      <Chat threadId={previewChatOf<{ threadId: string }>(context).setup.threadId} isNew />
    </Providers>
  ),
  play: async ({ canvasElement, loaded }) => {
    const { turn } = previewChatOf<{ turn: TurnGate }>({ loaded }).setup
    const canvas = within(canvasElement)
    await userEvent.type(canvas.getByRole('textbox', { name: 'Message' }), '/long 6')
    await userEvent.click(canvas.getByRole('button', { name: 'Send' }))
    await turn.step(2) // two deltas out, then the turn waits: the story shows it streaming
    await canvas.findByText(/delta 2\./)
    await expect(canvas.getByRole('status')).toHaveTextContent('streaming')
    turn.release()
    await waitFor(() => expect(canvas.getByRole('status')).toHaveTextContent('idle'))
  },
}
// #endregion
