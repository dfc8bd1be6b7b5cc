// The example app's stylesheet: the stories show its components as the app does.
import '../examples/chat-app/src/styles.css'
import { backendLoader } from '../stories/support/backend'
import type { Preview } from '../stories/support/storybookTypes'

const preview: Preview = {
  parameters: {
    layout: 'fullscreen',
    controls: { disable: true },
  },
  // `previewChatLoader` of @preview-chat/msw/storybook: a fresh backend for every story.
  loaders: [backendLoader],
}

export default preview
