/**
 * The threads of the reload row, written straight into the reference server's in-memory store
 * (`createMemoryStore`, the backend's default, exported by @preview-chat/server): the
 * server has no HTTP route that records a finished thread of N messages, and N/2 real turns of
 * 2,000 messages would take minutes. What a history read returns is then exactly what it returns
 * for a thread the agent recorded: the same `ThreadRecord`, read through the same route.
 */
import type { Message } from '@preview-chat/core'
import { threadKey, type MemoryStore, type PreviewChatStore } from '@preview-chat/server'

export const projectId = 'demo-project'
export const agentId = 'demo-agent'
export const user = 'alice'

const started = Date.parse('2026-12-01T09:00:00.000Z')

/** A word no markdown splits, unique to one thread: the last recorded message carries it. */
export function markerFor(threadId: string): string {
  return `endmarker${threadId.replaceAll('-', '').slice(0, 12)}`
}

/**
 * `count` recorded messages, user and assistant in turns; the assistant's text is two short
 * paragraphs of prose (the demo renders it as markdown), about 330 characters; the last message
 * ends with `marker`.
 */
export function recordedMessages(count: number, marker: string): Message[] {
  return Array.from({ length: count }, (_, i): Message => {
    const executionId = `seed-${i >> 1}`
    const role = i % 2 ? ('assistant' as const) : ('user' as const)
    let text =
      role === 'user'
        ? `Question ${i >> 1}: what changed in part ${i} of the plan since last week?`
        : `Part ${i} of the plan moved to the second week: the review comes first, then the ` +
          `rollout to the first two regions, with a check after each.\n\nNothing else ` +
          `changed in part ${i}. The owners are the same, the budget is the same, and the ` +
          `risks listed last week still hold; two of them are smaller now.`
    if (i === count - 1) text += ` ${marker}`
    return {
      id: `${executionId}:${role}`,
      role,
      executionId,
      executionStatus: 'success',
      createdAt: new Date(started + i * 1000).toISOString(),
      content: [{ type: 'text', text }],
    }
  })
}

/** Records a finished thread of `count` messages for `user`; returns its last message's marker. */
export function seedThread(
  store: PreviewChatStore,
  threadId: string,
  count: number,
  marker = markerFor(threadId),
): string {
  const messages = recordedMessages(count, marker)
  const memory = memoryOf(store)
  const state = memory.exportState()
  state.threads.push([
    threadKey({ ownerId: user, projectId, agentId }, threadId),
    {
      id: threadId,
      projectId,
      agentId,
      ownerId: user,
      createdAt: new Date(started).toISOString(),
      messages,
      openSuspensions: [],
      activeExecutionId: null,
    },
  ])
  for (let e = 0; e < count / 2; e++)
    state.executions.push([
      `${threadId}:seed-${e}`,
      {
        id: `${threadId}:seed-${e}`,
        threadId,
        projectId,
        agentId,
        ownerId: user,
        mainId: 'main',
        kind: 'message',
        status: 'success',
        startedAt: new Date(started + e * 2000).toISOString(),
        endedAt: new Date(started + e * 2000 + 1000).toISOString(),
      },
    ])
  memory.importState(state)
  return marker
}

/** The backend's store, which must be the in-memory one (the default) to be written so. */
function memoryOf(store: PreviewChatStore): MemoryStore {
  if (!('exportState' in store)) throw new Error('seedThread writes the in-memory store only')
  return store as MemoryStore
}

export function dropThread(store: PreviewChatStore, threadId: string): void {
  const memory = memoryOf(store)
  const state = memory.exportState()
  const key = threadKey({ ownerId: user, projectId, agentId }, threadId)
  state.threads = state.threads.filter(([each]) => each !== key)
  state.executions = state.executions.filter(([, execution]) => execution.threadId !== threadId)
  memory.importState(state)
}

const chatUrl = (serverUrl: string) =>
  `${serverUrl}/rest/projects/${projectId}/agents/v2/${agentId}/chat`

/**
 * Starts a real turn of the scripted agent on a seeded thread (`/long N`, one text delta every
 * `deltaMs`), reads its stream until `deltas` deltas arrived, and leaves it (the turn runs on, as
 * after a reload). The user message carries the marker: it is the last message whose text is
 * final. Returns the execution id (to stop the turn once measured).
 */
export async function startRunningTurn(
  serverUrl: string,
  threadId: string,
  marker: string,
  deltas: number,
  length: number,
): Promise<string> {
  const response = await fetch(chatUrl(serverUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${user}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message: `/long ${length} ${marker}`, sessionId: threadId }),
  })
  if (!response.ok || !response.body) throw new Error(`POST /chat answered ${response.status}`)
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let seen = ''
  let executionId: string | null = null
  while (!seen.includes(`delta ${deltas}. `)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the turn ended before ${deltas} deltas: ${seen.slice(0, 300)}`)
    seen += value
    executionId ??= /"executionId":"([^"]+)"/.exec(seen)?.[1] ?? null
  }
  await reader.cancel()
  if (!executionId) throw new Error(`no execution-started in ${seen.slice(0, 300)}`)
  return executionId
}

/** Stops a running turn (the Stop route), so that it does not run on through the next rounds. */
export async function stopTurn(
  serverUrl: string,
  threadId: string,
  executionId: string,
): Promise<void> {
  const response = await fetch(
    `${chatUrl(serverUrl)}/${encodeURIComponent(threadId)}/executions/${encodeURIComponent(executionId)}`,
    { method: 'DELETE', headers: { authorization: `Bearer ${user}` } },
  )
  await response.body?.cancel()
}
