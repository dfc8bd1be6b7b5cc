/* eslint-disable @typescript-eslint/no-non-null-assertion -- a missing value here is a failed run, as in tests */
import { useChat } from '@ai-sdk/react'
import { createPreviewChatClient, type Message } from '@preview-chat/core'
import { PreviewChatProvider, usePreviewChat } from '@preview-chat/react'
import { QueryClientProvider } from '@tanstack/react-query'
import type { UIMessage } from 'ai'
import { memo, Profiler, useLayoutEffect } from 'react'
import { createRoot } from 'react-dom/client'
import { installDom, sleep } from '../dom'
import { fmt, type Row, type Sizes } from '../row'
import { gc, timing, type Timing } from '../method'
import { key } from '../streams'

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

/** Every version's answer, serialised before any timer starts. */
function bodies(count: number, replaces: number) {
  const ours: string[] = []
  const aiSdk: string[] = []
  for (let version = 0; version <= replaces; version++) {
    const messages = transcript(count, version)
    ours.push(JSON.stringify({ data: { messages, openSuspensions: [], activeExecutionId: null } }))
    aiSdk.push(JSON.stringify(asUIMessages(messages)))
  }
  return { ours, aiSdk }
}

interface Run {
  renders: number[]
  times: number[]
}

async function ours(count: number, bodies: string[]): Promise<Run> {
  let version = 0
  const counters: Counters = { renders: 0, commits: [] }
  const client = createPreviewChatClient({
    push: false,
    relay: false,
    storage: null,
    resumeSignal: () => () => {},
    fetch: async () =>
      new Response(bodies[version], { headers: { 'content-type': 'application/json' } }),
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
  const run: Run = { renders: [], times: [] }
  for (version = 1; version < bodies.length; version++) {
    counters.renders = 0
    gc()
    const start = performance.now()
    const committed = nextCommit(counters)
    await session.refresh()
    await committed
    run.times.push(performance.now() - start)
    run.renders.push(counters.renders)
    const last = session.getState().messages.at(-1)?.content[0]
    if (last?.type !== 'text' || last.text !== `answer, version ${version}`)
      throw new Error(`row 3: ours shows the wrong transcript after replace ${version}`)
  }
  unmount()
  return run
}

async function vercel(count: number, bodies: string[]): Promise<Run> {
  const counters: Counters = { renders: 0, commits: [] }
  let setMessages!: (messages: UIMessage[]) => void
  let shown: UIMessage[] = []
  const initial = JSON.parse(bodies[0]!) as UIMessage[]
  function Transcript() {
    const chat = useChat({ messages: initial })
    setMessages = chat.setMessages
    shown = chat.messages
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
  const run: Run = { renders: [], times: [] }
  for (let version = 1; version < bodies.length; version++) {
    counters.renders = 0
    gc()
    const start = performance.now()
    const committed = nextCommit(counters)
    // What an app does with useChat: parse the record and hand the messages to setMessages.
    setMessages(JSON.parse(bodies[version]!) as UIMessage[])
    await committed
    run.times.push(performance.now() - start)
    run.renders.push(counters.renders)
    const last = shown.at(-1)?.parts[0]
    if (last?.type !== 'text' || last.text !== `answer, version ${version}`)
      throw new Error(`row 3: useChat shows the wrong transcript after replace ${version}`)
  }
  unmount()
  return run
}

/**
 * Both contenders on a `count`-message transcript: one warm-up mount each (unless `warmup` is
 * off), then `rounds` mounts each in a rotated order, `replaces` timed replaces per mount (a GC
 * before each). Times: min and median over every timed replace.
 */
export async function replaceRace(
  count: number,
  options: { replaces: number; rounds: number; warmup: boolean; peer: boolean },
) {
  installDom()
  const prebuilt = bodies(count, options.replaces)
  const contenders = {
    ours: () => ours(count, prebuilt.ours),
    ...(options.peer && { aiSdk: () => vercel(count, prebuilt.aiSdk) }),
  }
  const names = Object.keys(contenders) as (keyof typeof contenders)[]
  const runs: Record<string, Run> = {}
  for (const name of names) runs[name] = { renders: [], times: [] }
  for (let round = options.warmup ? -1 : 0; round < options.rounds; round++) {
    const order = round % 2 ? [...names].reverse() : names
    for (const name of order) {
      const run = await contenders[name]!()
      if (round < 0) continue
      runs[name]!.renders.push(...run.renders)
      runs[name]!.times.push(...run.times)
    }
  }
  const result = (run: Run): { renders: number[]; time: Timing } => ({
    renders: run.renders,
    time: timing(run.times),
  })
  return { ours: result(runs.ours!), aiSdk: runs.aiSdk ? result(runs.aiSdk) : null }
}

export async function replaceRow({ smoke }: Sizes): Promise<Row> {
  const count = smoke ? 200 : 2000
  const replaces = smoke ? 3 : 10
  const rounds = smoke ? 1 : 5
  const { ours: mine, aiSdk } = await replaceRace(count, {
    replaces,
    rounds,
    warmup: !smoke,
    peer: true,
  })
  const peer = aiSdk!
  const worst = Math.max(...mine.renders)
  const ok = worst <= 1
  const spreadOf = (r: number[]) =>
    Math.min(...r) === Math.max(...r) ? `${r[0]}` : `${Math.min(...r)}–${Math.max(...r)}`
  const show = (t: Timing) => `${fmt.ms(t.min)} / ${fmt.ms(t.median)} per replace`
  return {
    id: 3,
    name: 'Snapshot replace',
    workload: `${fmt.int(count)}-message transcript, replaces where only the last message's text changed (every version's body serialised before timing)`,
    method: `jsdom, React 19 (development build, needed for <Profiler>), memo message components counting renders; ${rounds} mounts per contender (rotated, one warm-up mount each) × ${replaces} replaces, a GC before each; min / median per replace; the new text checked on screen; ours = session.refresh() → fetch (a prebuilt body) → JSON → validation → TanStack Query structural sharing → commit; AI SDK useChat = JSON.parse of the same record → setMessages → commit (an app's own read, without the request)`,
    ours: `${spreadOf(mine.renders)} message renders per replace; ${show(mine.time)}`,
    peer: `useChat setMessages: ${spreadOf(peer.renders)} message renders per replace; ${show(peer.time)}`,
    ratio: `renders AI SDK/ours ${fmt.x(Math.max(...peer.renders) / Math.max(1, worst))}; time AI SDK/ours ${fmt.x(peer.time.min / mine.time.min)} (median ${fmt.x(peer.time.median / mine.time.median)})`,
    goal: '1 message component re-rendered per replace',
    met: ok,
    counts: [{ label: `row 3: at most ${worst} message renders per replace ≤ 1`, ok }],
  }
}
