// The example app's stylesheet: the stories show its components as the app does.
import '../examples/chat-app/src/styles.css'
import type { Preview } from '../stories/support/storybookTypes'

const preview: Preview = {
  parameters: {
    layout: 'fullscreen',
    controls: { disable: true },
  },
}

export default preview
