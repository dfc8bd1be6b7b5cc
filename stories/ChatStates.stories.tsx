import type { Meta, StoryObj } from '@storybook/react-vite'
import { expect, userEvent, waitFor, within } from 'storybook/test'
import { ChatStory } from './support/ChatStory'
import { holdRequests } from './support/hold'
import { scenario, scenarioOf } from './support/scenario'

/**
 * Every state a user of the chat can see, each reached through the reference backend mounted in
 * MSW (`@preview-chat/msw`) and its scenario controls, and shown by the example app's components
 * through the real `usePreviewChat`. Each play function drives the scenario and asserts what the
 * user sees; the stories run as tests in headless Chromium (`pnpm test:stories`).
 */
const meta = {
  title: 'Chat/States',
  render: (_args, context) => <ChatStory scenario={scenarioOf(context)} />,
} satisfies Meta

export default meta
type Story = StoryObj<typeof meta>

/** Streams and scripted turns take a while at the backend's pace; fail slowly rather than flakily. */
const slow = { timeout: 8000 }

/** The parts of the chat a play function reads and clicks, by role and accessible name. */
function chatOf(canvasElement: HTMLElement) {
  const canvas = within(canvasElement)
  return {
    canvas,
    status: () => canvas.getByRole('status'),
    transcript: () => canvas.getByRole('log', { name: 'Conversation' }),
    draft: () => canvas.getByRole('textbox', { name: 'Message' }),
    send: () => canvas.getByRole('button', { name: 'Send' }),
    messages: (role: 'user' | 'assistant') => canvas.queryAllByTestId(`message-${role}`),
    /** Resolves once the status bar shows `status` (the session's status, and its label). */
    statusIs: (status: string, label: string, options = slow) =>
      waitFor(() => {
        const bar = canvas.getByRole('status')
        expect(bar).toHaveAttribute('data-status', status)
        expect(bar).toHaveTextContent(label)
      }, options),
  }
}

const newThread = () => ({ threadId: crypto.randomUUID(), isNew: true })

export const EmptyThread: Story = {
  name: 'Empty thread',
  parameters: scenario(() => newThread()),
  play: async ({ canvasElement, loaded }) => {
    const { mock } = scenarioOf({ loaded })
    const chat = chatOf(canvasElement)
    await chat.statusIs('idle', 'Live')
    await expect(chat.transcript()).toHaveTextContent('No messages yet. Say something below.')
    await expect(chat.send()).toBeDisabled()

    await userEvent.type(chat.draft(), 'Hello')
    await expect(chat.send()).toBeEnabled()
    // A thread minted in this page has no history: nothing was read or sent.
    const { countRequests } = mock.backend.inspect
    await expect(countRequests({ route: 'messages', method: 'GET' })).toBe(0)
    await expect(countRequests({ route: 'chat', method: 'POST' })).toBe(0)
  },
}

export const StreamingLive: Story = {
  name: 'Streaming live',
  parameters: scenario((mock) => ({ ...newThread(), turn: mock.holdTurns() })),
  play: async ({ canvasElement, loaded }) => {
    const { turn } = scenarioOf({ loaded })
    const chat = chatOf(canvasElement)
    await userEvent.type(chat.draft(), '/long 8')
    await userEvent.click(chat.send())

    await turn?.step(3)
    await chat.statusIs('streaming', 'Live: streaming')
    const [answer] = chat.messages('assistant')
    await waitFor(() => expect(answer).toHaveTextContent('delta 1. delta 2. delta 3.'), slow)
    await expect(answer).toHaveAttribute('data-execution-status', 'running')
    await expect(answer).toHaveTextContent('Answering…')
    await expect(chat.transcript()).toHaveAttribute('aria-busy', 'true')

    // One more held step: the answer grows in place, token by token.
    await turn?.step()
    await waitFor(() => expect(answer).toHaveTextContent('delta 4.'), slow)
    await expect(answer).not.toHaveTextContent('delta 5.')
    // While it streams: Stop is offered, Send waits, the draft stays editable.
    await expect(chat.canvas.getByRole('button', { name: 'Stop' })).toBeEnabled()
    await userEvent.type(chat.draft(), 'Next question')
    await expect(chat.send()).toBeDisabled()
    await expect(chat.canvas.getByText(/A turn is running: you can keep typing/)).toBeVisible()
  },
}

export const RecoveringAfterReload: Story = {
  name: 'Recovering after a reload',
  parameters: scenario((mock) => ({ ...newThread(), reloadable: true, turn: mock.holdTurns() })),
  play: async ({ canvasElement, loaded }) => {
    const { mock, turn } = scenarioOf({ loaded })
    const chat = chatOf(canvasElement)
    await userEvent.type(chat.draft(), 'Hello there')
    await userEvent.click(chat.send())
    await turn?.step(4)
    await chat.statusIs('streaming', 'Live: streaming')
    await waitFor(() => expect(chat.canvas.getByText('Reasoning')).toBeInTheDocument(), slow)

    // The page reloads mid-turn; its first read of the record is slow, so recovering shows.
    mock.delayReads(1000)
    await userEvent.click(chat.canvas.getByRole('button', { name: 'Reload page' }))
    await expect(chat.canvas.getByText('Page load 2')).toBeInTheDocument()
    await chat.statusIs('recovering', 'Recovering…', { timeout: 800 })

    // The record brings back the message and the answer so far; the page follows the turn on.
    await chat.statusIs('following', 'Following the running turn')
    await expect(chat.messages('user')[0]).toHaveTextContent('Hello there')
    await expect(chat.messages('assistant')[0]).toHaveAttribute('data-execution-status', 'running')
    mock.delayReads(0)
    turn?.release()
    await waitFor(
      () => expect(chat.transcript()).toHaveTextContent('You said (2 words): "Hello there"'),
      slow,
    )
    await chat.statusIs('idle', 'Live')
    // Recovered, not re-sent: the backend saw one message.
    await expect(mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })).toBe(1)
  },
}

export const FollowingAnotherTab: Story = {
  name: 'Following a turn started in another tab',
  parameters: scenario(async (mock) => {
    // "Another tab" posts straight to the backend; this page only learns of it by reading.
    const { key, turn } = await mock.seed.runningTurn({ message: '/long 6', steps: 2 })
    return { threadId: key.threadId, turn }
  }),
  play: async ({ canvasElement, loaded }) => {
    const { mock, turn } = scenarioOf({ loaded })
    const chat = chatOf(canvasElement)
    await chat.statusIs('following', 'Following the running turn')
    await expect(chat.messages('user')[0]).toHaveTextContent('/long 6')
    const answer = chat.messages('assistant')[0]
    await waitFor(() => expect(answer).toHaveTextContent('delta 2.'), slow)
    await expect(answer).toHaveTextContent('Answering…')

    // This tab may stop the turn, and keeps its draft, but cannot send until the turn ends.
    await expect(chat.canvas.getByRole('button', { name: 'Stop' })).toBeEnabled()
    await userEvent.type(chat.draft(), 'Are you done?')
    await expect(chat.send()).toBeDisabled()

    // The other tab's turn goes on: push announces it, this page reads it.
    await turn?.step(2)
    await waitFor(() => expect(chat.messages('assistant')[0]).toHaveTextContent('delta 4.'), slow)
    turn?.release()
    await waitFor(() => expect(chat.messages('assistant')[0]).toHaveTextContent('delta 6.'), slow)
    await chat.statusIs('idle', 'Live')
    await expect(chat.draft()).toHaveValue('Are you done?')
    await expect(chat.send()).toBeEnabled()
    await expect(mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })).toBe(1)
  },
}

export const FailedReadKeepsTranscript: Story = {
  name: 'A failed read keeps the transcript',
  parameters: scenario(async (mock) => {
    const { key } = await mock.seed.thread({ messages: ['Hello'] })
    return { threadId: key.threadId }
  }),
  play: async ({ canvasElement, loaded }) => {
    const { mock } = scenarioOf({ loaded })
    const chat = chatOf(canvasElement)
    await waitFor(() => expect(chat.messages('assistant')).toHaveLength(1), slow)
    await chat.statusIs('idle', 'Live')

    // The browser comes back online, so the page reads again: that read fails, and so do the few
    // retries the engine makes on its own (the network stays down for this story).
    mock.failNextReads(10, { status: 503 })
    window.dispatchEvent(new Event('online'))
    const banner = await chat.canvas.findByTestId('error-read_failed', {}, slow)
    await expect(banner).toHaveTextContent('Could not refresh the conversation')
    await expect(banner).toHaveTextContent('The last known transcript stays on screen')
    await expect(within(banner).getByRole('button', { name: 'Retry now' })).toBeEnabled()
    // The transcript read before stays.
    await expect(chat.messages('user')).toHaveLength(1)
    await expect(chat.transcript()).toHaveTextContent('You said (1 word): "Hello"')
  },
}

/** Reads of the thread's history, held while "another tab" starts a turn. */
const heldReads = holdRequests('get', '*/rest/projects/*/agents/v2/*/chat/*/messages')

export const TurnAlreadyRunning: Story = {
  name: 'turn_already_running, the draft kept',
  parameters: scenario(
    async (mock) => {
      heldReads.release()
      const { key } = await mock.seed.thread({ messages: ['Hello'] })
      return { threadId: key.threadId }
    },
    [heldReads.handler],
  ),
  play: async ({ canvasElement, loaded }) => {
    const { mock, threadId } = scenarioOf({ loaded })
    const chat = chatOf(canvasElement)
    await waitFor(() => expect(chat.messages('assistant')).toHaveLength(1), slow)
    await chat.statusIs('idle', 'Live')

    // Another tab starts a turn; this page has not read it yet (its reads are held).
    heldReads.hold()
    const { turn } = await mock.seed.runningTurn({ threadId, message: '/long 4' })
    await userEvent.type(chat.draft(), 'And another thing')
    await userEvent.click(chat.send())

    const banner = await chat.canvas.findByTestId('error-turn_already_running', {}, slow)
    await expect(banner).toHaveTextContent('A turn is already running in this conversation')
    await expect(chat.draft()).toHaveValue('And another thing')

    // The read goes through: the page follows the other tab's turn, the draft waits.
    heldReads.release()
    await chat.statusIs('following', 'Following the running turn')
    await expect(chat.send()).toBeDisabled()
    turn.release()
    await chat.statusIs('idle', 'Live')
    await expect(chat.messages('assistant')[1]).toHaveTextContent('delta 4.')
    await expect(chat.draft()).toHaveValue('And another thing')
    await expect(chat.send()).toBeEnabled()
    // The rejected message was never recorded.
    await expect(chat.transcript()).not.toHaveTextContent('And another thing')
  },
}

/** Stop requests, held so that "Stopping…" can be seen before the backend answers. */
const heldStops = holdRequests('delete', '*/rest/projects/*/agents/v2/*/chat/*/executions/*')

export const StoppingAndCancelled: Story = {
  name: 'Stopping, then cancelled',
  parameters: scenario(
    (mock) => {
      heldStops.hold()
      return { ...newThread(), turn: mock.holdTurns(), release: () => heldStops.release() }
    },
    [heldStops.handler],
  ),
  play: async ({ canvasElement, loaded }) => {
    const { turn, release } = scenarioOf({ loaded })
    const chat = chatOf(canvasElement)
    await userEvent.type(chat.draft(), '/long 10')
    await userEvent.click(chat.send())
    await turn?.step(2)
    await waitFor(() => expect(chat.messages('assistant')[0]).toHaveTextContent('delta 2.'), slow)

    await userEvent.click(chat.canvas.getByRole('button', { name: 'Stop' }))
    await chat.statusIs('stopping', 'Stopping…')
    await expect(chat.canvas.getByRole('button', { name: 'Stopping…' })).toBeDisabled()

    release?.()
    const answer = () => chat.messages('assistant')[0]
    await waitFor(
      () => expect(answer()).toHaveAttribute('data-execution-status', 'cancelled'),
      slow,
    )
    await expect(answer()).toHaveTextContent('Cancelled')
    await expect(answer()).toHaveTextContent('delta 2.')
    await expect(answer()).not.toHaveTextContent('delta 10.')
    await chat.statusIs('idle', 'Live')
    await expect(chat.canvas.queryByRole('button', { name: /Stop/ })).toBeNull()
  },
}

export const SuspendedThenResumed: Story = {
  name: 'Suspended awaiting approval, then resumed: the call reads answered',
  parameters: scenario(async (mock) => {
    const { key } = await mock.seed.suspension()
    return { threadId: key.threadId }
  }),
  play: async ({ canvasElement }) => {
    const chat = chatOf(canvasElement)
    const approval = await chat.canvas.findByRole(
      'group',
      { name: 'Approval for request_approval' },
      slow,
    )
    await expect(approval).toHaveTextContent('This tool call waits for your approval.')
    await expect(chat.transcript()).toHaveTextContent('waiting for approval')
    await chat.statusIs('idle', 'Live')

    await userEvent.click(within(approval).getByRole('button', { name: 'Approve' }))
    await waitFor(
      () => expect(chat.transcript()).toHaveTextContent('Approved: the email was sent.'),
      slow,
    )
    await chat.statusIs('idle', 'Live')
    // Once the record of the resumed turn is read, nothing waits for approval any more.
    await waitFor(
      () => expect(chat.canvas.queryAllByRole('group', { name: /Approval for/ })).toHaveLength(0),
      slow,
    )
    await expect(chat.transcript()).not.toHaveTextContent('waiting for approval')
    // The suspended turn's call is answered (its result is in the resumed turn's message), never
    // running: the record keeps no `state` for it, `toolCallStatus` reads the turn's ending.
    const calls = () =>
      within(chat.transcript())
        .getAllByText(/^(answered|done|running…|waiting for approval)$/)
        .map((label) => label.textContent)
    await waitFor(() => expect(calls()).toEqual(['answered', 'done']), slow)
    await expect(chat.transcript()).not.toHaveTextContent('running…')
  },
}

export const TruncatedDelegation: Story = {
  name: 'A truncated delegation',
  parameters: scenario(async (mock) => {
    const { key } = await mock.seed.truncatedDelegation({ chars: 4600 })
    return { threadId: key.threadId }
  }),
  play: async ({ canvasElement }) => {
    const chat = chatOf(canvasElement)
    const marker = await chat.canvas.findByTestId('truncated-marker', {}, slow)
    await expect(marker).toHaveTextContent('Truncated: the delegated agent wrote more than')
    const trace = chat.canvas.getByRole('region', { name: 'Delegated agent' })
    const reasoning = within(trace).getByText(/^r+$/).textContent ?? ''
    const text = within(trace).getByTestId('child-text').textContent ?? ''
    // 4,600 characters streamed, half reasoning then half text; the record keeps 4,000 of them.
    await expect(reasoning).toHaveLength(2300)
    await expect(text).toHaveLength(1700)
    await expect(chat.transcript()).toHaveTextContent('The delegated task is done.')
    await chat.statusIs('idle', 'Live')
  },
}

export const NotYourThread: Story = {
  name: 'A thread that is not yours (none of it shows; no dead end)',
  parameters: scenario(async (mock) => {
    const { key } = await mock.seed.thread({ user: 'alice', messages: ['My private notes'] })
    mock.actAs('bob')
    return { threadId: key.threadId, user: 'bob' }
  }),
  play: async ({ canvasElement }) => {
    const chat = chatOf(canvasElement)
    const banner = await chat.canvas.findByTestId('error-not_found', {}, slow)
    await expect(banner).toHaveTextContent('Conversation not found')
    await expect(banner).toHaveTextContent('for bob')
    await expect(chat.status()).toHaveTextContent('as bob')
    // Nothing of alice's thread shows; bob's first message would start his own conversation.
    await expect(chat.canvas.queryByRole('log')).toBeNull()
    await expect(canvasElement).not.toHaveTextContent('My private notes')
    await expect(chat.draft()).toBeEnabled()
  },
}
