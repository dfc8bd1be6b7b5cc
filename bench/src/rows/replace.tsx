import { useChat } from '@ai-sdk/react'
import { createPreviewChatClient, type Message } from '@preview-chat/core'
import { PreviewChatProvider, usePreviewChat } from '@preview-chat/react'
import { QueryClientProvider } from '@tanstack/react-query'
import type { UIMessage } from 'ai'
import { memo, Profiler, useLayoutEffect } from 'react'
import { createRoot } from 'react-dom/client'
import { installDom, sleep } from '../dom'
import { fmt, type Row, type Sizes } from '../row'
import { json, key, median } from '../streams'

const at = '2026-11-30T10:00:00.000Z'

/** The recorded transcript at `version`: only the last message's text differs between versions. */
function transcript(count: number, version: number): Message[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `exec-${i >> 1}:${i % 2 ? 'assistant' : 'user'}`,
    role: i % 2 ? ('assistant' as const) : ('user' as const),
    executionId: `exec-${i >> 1}`,
    executionStatus: 'success' as const,
    createdAt: at,
    content: [
      {
        type: 'text' as const,
        text: i === count - 1 ? `answer, version ${version}` : `message ${i} `.repeat(8),
      },
    ],
  }))
}
const asUIMessages = (messages: Message[]): UIMessage[] =>
  messages.map((m) => ({
    id: m.id,
    role: m.role,
    parts: m.content.map((p) => ({ type: 'text' as const, text: p.type === 'text' ? p.text : '' })),
  }))

interface Counters {
  renders: number
  commits: (() => void)[]
}

const OurMessage = memo(function OurMessage({
  message,
  counters,
}: {
  message: Message
  counters: Counters
}) {
  counters.renders++
  return <li>{message.content.map((p) => (p.type === 'text' ? p.text : '')).join('')}</li>
})
const AiMessage = memo(function AiMessage({
  message,
  counters,
}: {
  message: UIMessage
  counters: Counters
}) {
  counters.renders++
  return <li>{message.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')}</li>
})

function mount(node: React.ReactNode, counters: Counters) {
  const container = document.createElement('div')
  document.body.append(container)
  const root = createRoot(container)
  root.render(
    <Profiler
      id="transcript"
      onRender={() => counters.commits.splice(0).forEach((resolve) => resolve())}
    >
      {node}
    </Profiler>,
  )
  return () => {
    root.unmount()
    container.remove()
  }
}
const nextCommit = (counters: Counters) =>
  new Promise<void>((resolve) => counters.commits.push(resolve))

async function ours(count: number, replaces: number) {
  let version = 0
  const counters: Counters = { renders: 0, commits: [] }
  const client = createPreviewChatClient({
    push: false,
    relay: false,
    storage: null,
    resumeSignal: () => () => {},
    fetch: async () =>
      json({
        data: {
          messages: transcript(count, version),
          openSuspensions: [],
          activeExecutionId: null,
        },
      }),
  })
  let ready!: () => void
  const loaded = new Promise<void>((resolve) => (ready = resolve))
  function Transcript() {
    const chat = usePreviewChat(key)
    useLayoutEffect(() => {
      if (chat.messages.length === count) ready()
    })
    return (
      <ol>
        {chat.messages.map((m) => (
          <OurMessage key={m.id} message={m} counters={counters} />
        ))}
      </ol>
    )
  }
  const unmount = mount(
    <QueryClientProvider client={client.queryClient}>
      <PreviewChatProvider client={client}>
        <Transcript />
      </PreviewChatProvider>
    </QueryClientProvider>,
    counters,
  )
  await loaded
  const session = client.session({ ...key, queryClient: client.queryClient })
  const renders: number[] = []
  const times: number[] = []
  for (let i = 0; i < replaces; i++) {
    version++
    counters.renders = 0
    const start = performance.now()
    const committed = nextCommit(counters)
    await session.refresh()
    await committed
    times.push(performance.now() - start)
    renders.push(counters.renders)
  }
  unmount()
  return { renders, time: median(times) }
}

async function vercel(count: number, replaces: number) {
  const counters: Counters = { renders: 0, commits: [] }
  let setMessages!: (messages: UIMessage[]) => void
  function Transcript() {
    const chat = useChat({ messages: asUIMessages(transcript(count, 0)) })
    setMessages = chat.setMessages
    return (
      <ol>
        {chat.messages.map((m) => (
          <AiMessage key={m.id} message={m} counters={counters} />
        ))}
      </ol>
    )
  }
  const unmount = mount(<Transcript />, counters)
  await sleep(50)
  const renders: number[] = []
  const times: number[] = []
  for (let version = 1; version <= replaces; version++) {
    // What an app does with useChat: fetch the record and hand the parsed messages to setMessages.
    const body = JSON.stringify(asUIMessages(transcript(count, version)))
    counters.renders = 0
    const start = performance.now()
    const committed = nextCommit(counters)
    setMessages(JSON.parse(body) as UIMessage[])
    await committed
    times.push(performance.now() - start)
    renders.push(counters.renders)
  }
  unmount()
  return { renders, time: median(times) }
}

export async function replaceRow({ smoke }: Sizes): Promise<Row> {
  installDom()
  const count = smoke ? 200 : 2000
  const replaces = smoke ? 3 : 20
  await ours(count, 2) // warm-up
  const mine = await ours(count, replaces)
  const peer = await vercel(count, replaces)
  const worst = Math.max(...mine.renders)
  const ok = worst <= 1
  const spread = (r: number[]) =>
    Math.min(...r) === Math.max(...r) ? `${r[0]}` : `${Math.min(...r)}–${Math.max(...r)}`
  return {
    id: 3,
    name: 'Snapshot replace',
    workload: `${fmt.int(count)}-message transcript, ${replaces} replaces where only the last message's text changed`,
    method:
      'jsdom, React 19 (development build, needed for <Profiler>), memo message components counting renders; ours = session.refresh() → fetch → JSON → valibot → TanStack Query structural sharing → commit; AI SDK useChat = JSON.parse of the same record → setMessages → commit; median time per replace',
    ours: `${spread(mine.renders)} message renders per replace; ${fmt.ms(mine.time)} per replace`,
    peer: `useChat setMessages: ${spread(peer.renders)} message renders per replace; ${fmt.ms(peer.time)} per replace`,
    ratio: `renders AI SDK/ours ${fmt.x(Math.max(...peer.renders) / Math.max(1, worst))}; time AI SDK/ours ${fmt.x(peer.time / mine.time)}`,
    goal: '1 message component re-rendered per replace',
    met: ok,
    counts: [{ label: `row 3: at most ${worst} message renders per replace ≤ 1`, ok }],
  }
}
