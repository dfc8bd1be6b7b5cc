import type { Meta, StoryObj } from '@storybook/react-vite'
// The opt-in entry: a built Storybook is a production build, where `@preview-chat/react/devtools`
// renders nothing.
import { PreviewChatDevtools } from '@preview-chat/react/devtools/production'
import { expect, userEvent, waitFor, within } from 'storybook/test'
import { ChatStory } from './support/ChatStory'
import { scenario, scenarioOf } from './support/scenario'

/**
 * The devtools panel (`@preview-chat/react/devtools`) beside the example app's chat: the
 * session's status, its last actions through the reducer, its reads / push / relay traffic and
 * its engine state.
 */
const meta = {
  title: 'Devtools/Panel',
  render: (_args, context) => (
    <ChatStory
      scenario={scenarioOf(context)}
      tools={<PreviewChatDevtools initialIsOpen position="bottom-right" />}
    />
  ),
} satisfies Meta

export default meta
type Story = StoryObj<typeof meta>

const slow = { timeout: 8000 }

export const FollowingATurn: Story = {
  name: 'Following a turn',
  parameters: scenario(async (mock) => {
    const { key } = await mock.seed.thread({ messages: ['Hello'] })
    return { threadId: key.threadId }
  }),
  play: async ({ canvasElement, loaded }) => {
    const { threadId } = scenarioOf({ loaded })
    const canvas = within(canvasElement)
    const panel = canvas.getByRole('region', { name: 'preview-chat devtools' })
    const session = await within(panel).findByRole('article', { name: `Thread ${threadId}` }, slow)
    await waitFor(() => expect(session).toHaveTextContent('idle'), slow)

    await userEvent.type(canvas.getByRole('textbox', { name: 'Message' }), '/long 4')
    await userEvent.click(canvas.getByRole('button', { name: 'Send' }))
    const actions = within(session).getByRole('list', { name: `Actions of Thread ${threadId}` })
    await waitFor(() => expect(actions).toHaveTextContent('submit-requested'), slow)
    await waitFor(() => expect(actions).toHaveTextContent('turn-events'), slow)
    await waitFor(() => expect(actions).toHaveTextContent('stream-ended'), slow)
    await waitFor(() => expect(session).toHaveTextContent(/Reads\s*[1-9]\d* started/), slow)

    await userEvent.click(within(session).getByText('Engine state'))
    const json = within(session).getByLabelText(`Engine state of Thread ${threadId}`)
    await expect(json).toHaveTextContent(`"threadId": "${threadId}"`)
    await userEvent.click(canvas.getByRole('button', { name: 'Close preview-chat devtools' }))
    await expect(canvas.queryByRole('region', { name: 'preview-chat devtools' })).toBeNull()
  },
}
