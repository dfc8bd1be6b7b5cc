/**
 * `pnpm interop:n8n --session <file>`: runs the client's scenarios against a running, released n8n
 * (2.41) and prints a table. Not part of CI: it needs a live n8n with an agent whose model answers
 * (see docs/interop.md for how the recorded run was set up). The session file is JSON:
 * `{ baseUrl, cookie, browserId, projectId, agentId }` — the `n8n-auth` cookie and the `browser-id`
 * of a login.
 *
 * Each scenario runs on a fresh thread, with clients as separate browser tabs would be (one
 * TanStack cache each, the SSE push with a `pushRef` of its own), through the public API only.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import {
  createPreviewChatClient,
  ssePush,
  type PreviewChatClientOptions,
  type PreviewChatSession,
  type SessionState,
} from '@preview-chat/core'

interface N8nSession {
  baseUrl: string
  cookie: string
  browserId: string
  projectId: string
  agentId: string
}

const args = process.argv.slice(2)
const sessionFile = args[args.indexOf('--session') + 1]
if (!args.includes('--session') || !sessionFile) {
  console.error('usage: pnpm interop:n8n --session <session.json>  (see docs/interop.md)')
  process.exit(2)
}
const n8n = JSON.parse(readFileSync(sessionFile, 'utf8')) as N8nSession

/** A browser tab: its own client, cache and push connection; counts its POSTs. */
function tab(options: Partial<PreviewChatClientOptions> & { failReads?: number } = {}) {
  const warnings: string[] = []
  let posts = 0
  let failReads = options.failReads ?? 0
  const client = createPreviewChatClient({
    baseUrl: n8n.baseUrl,
    headers: { cookie: n8n.cookie, 'browser-id': n8n.browserId },
    pushUrl: `${n8n.baseUrl}/push?pushRef=${randomUUID()}`,
    push: ssePush(),
    storage: null,
    relay: false,
    lingerMs: 0,
    onWarning: (message) => warnings.push(message),
    fetch: async (input, init) => {
      const method = init?.method ?? 'GET'
      if (method === 'POST') posts++
      if (method === 'GET' && String(input).endsWith('/messages') && failReads > 0) {
        failReads--
        throw new TypeError('fetch failed (injected by the interop script)')
      }
      return fetch(input, init)
    },
    ...options,
  })
  return { client, warnings, posts: () => posts }
}

function follow(session: PreviewChatSession) {
  const states: SessionState[] = []
  const unsubscribe = session.subscribe((state) => states.push(state))
  const statuses = () =>
    states.map((s) => s.status).filter((status, i, all) => i === 0 || all[i - 1] !== status)
  return { states, statuses, unsubscribe }
}

async function until(session: PreviewChatSession, done: (s: SessionState) => boolean, ms = 20_000) {
  const started = Date.now()
  while (!done(session.getState())) {
    if (Date.now() - started > ms) throw new Error(`timed out; status ${session.getState().status}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return session.getState()
}

const key = (threadId: string) => ({ projectId: n8n.projectId, agentId: n8n.agentId, threadId })
const thread = () => `interop-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`
const answerOf = (state: SessionState) => {
  const last = state.messages.at(-1)
  return last?.role === 'assistant'
    ? last.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
    : ''
}
const words = (text: string) => text.trim().split(/\s+/).filter(Boolean).length
// The record says how a turn ended: a turn's `done` alone leaves its answer `running` until then.
const ended = (s: SessionState) =>
  s.status === 'idle' &&
  s.activeExecutionId === null &&
  s.messages.at(-1)?.role === 'assistant' &&
  s.messages.at(-1)?.executionStatus !== 'running'

/**
 * Two tabs of one new thread, relayed to each other over BroadcastChannel, both showing the
 * thread (subscribed, as a page is: a tab relays only while it does); B has read it.
 */
async function twoTabsOfANewThread() {
  const threadId = thread()
  const a = tab({ relay: undefined, scope: `interop-${threadId}` })
  const b = tab({ relay: undefined, scope: `interop-${threadId}` })
  const sessionA = a.client.session({ ...key(threadId), isNew: true })
  const sessionB = b.client.session(key(threadId))
  const seenA = follow(sessionA)
  const seenB = follow(sessionB)
  await until(sessionB, (s) => s.status !== 'recovering')
  const close = () => {
    seenA.unsubscribe()
    seenB.unsubscribe()
    sessionA.dispose()
    sessionB.dispose()
  }
  return { b, sessionA, sessionB, seenB, close }
}

type Result = { scenario: string; result: 'pass' | 'fail' | 'platform limit'; notes: string }

const scenarios: [string, () => Promise<Omit<Result, 'scenario'>>][] = [
  [
    'stream a turn live; the record replaces it without a jump',
    async () => {
      const a = tab()
      const session = a.client.session({ ...key(thread()), isNew: true })
      const seen = follow(session)
      session.setDraft('[[words=20 delay=40]] Please count to twenty.')
      const result = await session.submit()
      const final = await until(session, ended)
      const live = seen.states.filter((s) => s.status === 'streaming').length
      const id = final.messages.at(-1)?.executionId ?? ''
      seen.unsubscribe()
      session.dispose()
      const ok =
        result.outcome === 'accepted' &&
        live > 1 &&
        words(answerOf(final)) === 20 &&
        /^[A-Za-z0-9]{16}$/.test(id) &&
        a.posts() === 1
      return {
        result: ok ? 'pass' : 'fail',
        notes: `statuses ${seen.statuses().join(' → ')}; ${live} streaming states; ${words(answerOf(final))} words; execution ${id} (from done); ${a.posts()} POST; server ${JSON.stringify(final.server)}`,
      }
    },
  ],
  [
    'another tab follows a turn it did not start (push + reads)',
    async () => {
      const threadId = thread()
      const a = tab()
      const b = tab()
      const sessionA = a.client.session({ ...key(threadId), isNew: true })
      const seenA = follow(sessionA)
      sessionA.setDraft('[[words=30 delay=60]] Count to thirty.')
      await sessionA.submit()
      await until(sessionA, (s) => answerOf(s).length > 0)
      const sessionB = b.client.session(key(threadId))
      const seenB = follow(sessionB)
      const finalA = await until(sessionA, ended)
      const finalB = await until(sessionB, (s) => ended(s) && answerOf(s) === answerOf(finalA))
      const followed = seenB.statuses().includes('following')
      const gated = seenB.states.some((s) => s.status === 'following' && !s.canSubmit)
      seenA.unsubscribe()
      seenB.unsubscribe()
      sessionA.dispose()
      sessionB.dispose()
      return {
        result: followed && gated && b.posts() === 0 ? 'pass' : 'fail',
        notes: `tab B: ${seenB.statuses().join(' → ')}; gate shut while following; ${words(answerOf(finalB))} words, the same as tab A`,
      }
    },
  ],
  [
    'reload mid-turn: what the person sees after it',
    async () => {
      const threadId = thread()
      const a = tab()
      const sessionA = a.client.session({ ...key(threadId), isNew: true })
      sessionA.setDraft('[[words=40 delay=60]] Count to forty.')
      await sessionA.submit()
      await until(sessionA, (s) => words(answerOf(s)) >= 5)
      sessionA.dispose() // a reload closes the tab's connections
      const c = tab()
      const sessionC = c.client.session(key(threadId))
      const seenC = follow(sessionC)
      const final = await until(sessionC, ended)
      const status = final.messages.at(-1)?.executionStatus
      seenC.unsubscribe()
      sessionC.dispose()
      return {
        result: status === 'cancelled' && c.posts() === 0 ? 'platform limit' : 'fail',
        notes: `n8n 2.41 cancels a turn whose POST closes: the reloaded tab shows it ${status} with ${words(answerOf(final))} words kept, and posts nothing again (${seenC.statuses().join(' → ')})`,
      }
    },
  ],
  [
    'Stop from the tab that sent the message',
    async () => {
      const a = tab()
      const session = a.client.session({ ...key(thread()), isNew: true })
      const seen = follow(session)
      session.setDraft('[[words=60 delay=60]] Count to sixty.')
      await session.submit()
      await until(session, (s) => words(answerOf(s)) >= 5)
      const stopped = await session.stop()
      const final = await until(session, ended)
      seen.unsubscribe()
      session.dispose()
      const status = final.messages.at(-1)?.executionStatus
      return {
        result: stopped.cancelRequested && status === 'cancelled' ? 'pass' : 'fail',
        notes: `stop() → ${JSON.stringify(stopped)} by closing the POST (no Stop route); record: ${status} after ${words(answerOf(final))} words; ${seen.statuses().join(' → ')}`,
      }
    },
  ],
  [
    'Stop from another tab',
    async () => {
      const threadId = thread()
      const a = tab()
      const b = tab()
      const sessionA = a.client.session({ ...key(threadId), isNew: true })
      follow(sessionA) // subscribed, as a page is: a session that nobody listens to reads nothing
      sessionA.setDraft('[[words=30 delay=60]] Count to thirty.')
      await sessionA.submit()
      await until(sessionA, (s) => words(answerOf(s)) >= 3)
      const sessionB = b.client.session(key(threadId))
      const seenB = follow(sessionB)
      await until(sessionB, (s) => s.status === 'following')
      const canStop = sessionB.getState().canStop
      const stopped = await sessionB.stop()
      const final = await until(sessionA, ended)
      seenB.unsubscribe()
      sessionA.dispose()
      sessionB.dispose()
      const status = final.messages.at(-1)?.executionStatus
      return {
        result:
          !canStop && stopped.error?.code === 'unsupported' && status === 'success'
            ? 'platform limit'
            : 'fail',
        notes: `n8n 2.41 has no Stop by execution id: tab B shows canStop false, stop() → ${stopped.error?.code}; the turn ends ${status}`,
      }
    },
  ],
  [
    'competing submit from a second tab (the server would accept it)',
    async () => {
      const { b, sessionA, sessionB, close } = await twoTabsOfANewThread()
      sessionA.setDraft('[[words=20 delay=60]] Count to twenty.')
      await sessionA.submit()
      await until(sessionB, (s) => s.status === 'following')
      sessionB.setDraft('A competing message')
      const competing = await sessionB.submit()
      await until(sessionA, ended)
      const final = await until(sessionB, ended)
      close()
      const users = final.messages.filter((m) => m.role === 'user').length
      return {
        result: competing.outcome === 'busy' && b.posts() === 0 && users === 1 ? 'pass' : 'fail',
        notes: `tab B (BroadcastChannel relay + push): submit() → ${competing.outcome}, draft kept ("${sessionB.getState().draft}"); one turn recorded. The client's gate, since the server accepts concurrent turns`,
      }
    },
  ],
  [
    "competing submit while the first tab's POST is on its way (before its turn begins)",
    async () => {
      const { b, sessionA, sessionB, seenB, close } = await twoTabsOfANewThread()
      sessionA.setDraft('[[words=20 delay=60]] Count to twenty.')
      sessionB.setDraft('At the same moment')
      const postedAt = Date.now()
      const sent = sessionA.submit()
      // BroadcastChannel delivers in a later task: give it a few ms, far less than n8n takes to
      // begin the turn.
      await new Promise((resolve) => setTimeout(resolve, 20))
      const bStatus = sessionB.getState().status
      const competing = await sessionB.submit()
      await sent
      const acceptedAfter = Date.now() - postedAt
      await until(sessionA, ended)
      const final = await until(sessionB, ended)
      close()
      const users = final.messages.filter((m) => m.role === 'user').length
      return {
        result: competing.outcome === 'busy' && b.posts() === 0 && users === 1 ? 'pass' : 'fail',
        notes: `tab B 20 ms after A's POST: ${bStatus}, submit() → ${competing.outcome}; A's turn began ${acceptedAfter} ms after its POST; one turn recorded; B: ${seenB.statuses().join(' → ')}`,
      }
    },
  ],
  [
    'failed reads keep the transcript, then recover',
    async () => {
      const threadId = thread()
      const a = tab()
      const sessionA = a.client.session({ ...key(threadId), isNew: true })
      follow(sessionA) // subscribed, as a page is: a session that nobody listens to reads nothing
      sessionA.setDraft('[[words=10 delay=30]] Count to ten.')
      await sessionA.submit()
      await until(sessionA, ended)
      sessionA.dispose()
      const c = tab({ failReads: 2 })
      const sessionC = c.client.session(key(threadId))
      const seenC = follow(sessionC)
      const final = await until(sessionC, ended)
      const failed = seenC.states.some((s) => s.readError?.code === 'network_error')
      seenC.unsubscribe()
      sessionC.dispose()
      return {
        result:
          failed && final.readError === null && words(answerOf(final)) === 10 ? 'pass' : 'fail',
        notes: `two reads failed (readError network_error shown), the third showed the record: ${seenC.statuses().join(' → ')}`,
      }
    },
  ],
]

const results: Result[] = []
for (const [scenario, run] of scenarios) {
  try {
    results.push({ scenario, ...(await run()) })
  } catch (error) {
    results.push({
      scenario,
      result: 'fail',
      notes: error instanceof Error ? error.message : String(error),
    })
  }
  console.error(`${results.at(-1)?.result}: ${scenario}`)
}

const version = await fetch(`${n8n.baseUrl.replace(/\/rest$/, '')}/rest/settings`, {
  headers: { cookie: n8n.cookie, 'browser-id': n8n.browserId },
})
  .then((response) => response.json() as Promise<{ data?: { versionCli?: string } }>)
  .then((body) => body.data?.versionCli ?? 'unknown')
  .catch(() => 'unknown')
console.log(`n8n ${version} at ${n8n.baseUrl}, ${new Date().toISOString()}\n`)
console.log('| scenario | result | what happened |')
console.log('| --- | --- | --- |')
for (const { scenario, result, notes } of results)
  console.log(`| ${scenario} | ${result} | ${notes} |`)
process.exit(results.some((r) => r.result === 'fail') ? 1 : 0)
