/**
 * The floor of the reload row: what any page must do to show a recorded thread. One `fetch` of
 * the thread's history (the same route, the same cookie as the demo), `JSON.parse`, and a plain
 * React 19 render of the list (production build, bundled with esbuild by `main.ts`). No
 * validation, no cache, no markdown, no push channel.
 */
import { createRoot } from 'react-dom/client'

interface Part {
  type: string
  text?: string
}
interface Message {
  id: string
  role: string
  content: Part[]
}

// The page's own code begins (every import evaluated): the bench's "read sent after the code".
performance.mark('bench:page')
const threadId = new URLSearchParams(location.search).get('thread') ?? ''
const response = await fetch(
  `/rest/projects/demo-project/agents/v2/demo-agent/chat/${encodeURIComponent(threadId)}/messages`,
)
const body = JSON.parse(await response.text()) as { data: { messages: Message[] } }

function Transcript({ messages }: { messages: Message[] }) {
  return (
    <ol>
      {messages.map((message) => (
        <li key={message.id} className="m">
          {message.role}: {message.content.map((part) => part.text ?? '').join('')}
        </li>
      ))}
    </ol>
  )
}

const root = document.getElementById('root')
if (!root) throw new Error('no #root')
createRoot(root).render(<Transcript messages={body.data.messages} />)
