import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// Where the chat's backend runs: the reference server in development
// (`npx -p @preview-chat/server preview-chat-server`). `vite preview` serves the production build
// with the same proxy (its default).
const backend = process.env.PREVIEW_CHAT_SERVER ?? 'http://127.0.0.1:4317'

export default defineConfig({
  plugins: [react()],
  server: { proxy: { '/rest': { target: backend, ws: true } } },
})
