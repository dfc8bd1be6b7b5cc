// Writes the complete page of @preview-chat/assistant-ui's README, as its text has it, to
// app/readme/[threadId]/App.tsx (not committed), which app/readme/[threadId]/page.tsx renders: a
// README change that breaks the page breaks this app's build or e2e/next-app.spec.ts.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const readme = readFileSync(
  fileURLToPath(new URL('../../packages/assistant-ui/README.md', import.meta.url)),
  'utf8',
)
const page = /<!-- example: page -->\n+```tsx\n([\s\S]*?)\n```/.exec(readme)?.[1]
if (!page) throw new Error('packages/assistant-ui/README.md has no `<!-- example: page -->` block.')
const dir = new URL('./app/readme/[threadId]/', import.meta.url)
mkdirSync(dir, { recursive: true })
writeFileSync(new URL('App.tsx', dir), `${page}\n`)
