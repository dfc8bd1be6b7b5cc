/**
 * The exchanges of `fixtures/next-era/`, generated from the next-era flavor (there is no released
 * server of the platform's queue to capture from): one scripted scene against an in-process
 * backend, paced by the gate, with a fixed clock and no timers firing, so that every run gives
 * the same bytes once random ids are numbered in order of appearance. `scripts/capture-next-era.ts`
 * writes them; `next-era.fixtures.test.ts` checks that the flavor still answers them.
 */
import { createPreviewChatBackend, type PreviewChatBackend } from '../backend'
import { createGate, manualTimers } from './harness'

const base = '/rest/projects/p1/agents/v2/a1/chat'
const origin = 'http://127.0.0.1'
const threadId = '11111111-1111-4111-8111-111111111111'
const messageIds = {
  first: '22222222-2222-4222-8222-222222222201',
  second: '22222222-2222-4222-8222-222222222202',
  third: '22222222-2222-4222-8222-222222222203',
} as const
const fixed = new Set<string>([threadId, ...Object.values(messageIds)])

/** What one scene produced: file name → its text. */
export type Capture = Record<string, string>

interface Scene {
  backend: PreviewChatBackend
  gate: ReturnType<typeof createGate>
  files: Capture
}

const headers = { Authorization: 'Bearer alice', 'Content-Type': 'application/json' }

function request(method: string, path: string, body?: unknown, extra: object = {}): Request {
  return new Request(`${origin}${path}`, {
    method,
    headers: { ...headers, ...extra },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
}

/** A REST exchange as the n8n captures keep one: `{ status, body }`. */
async function rest(scene: Scene, name: string, method: string, path: string, body?: unknown) {
  const response = await scene.backend.fetch(request(method, path, body))
  scene.files[name] =
    `${JSON.stringify({ status: response.status, body: await response.json() }, null, 2)}\n`
}

/** A chat POST whose stream is read to its end in the background; `done` settles with its text. */
async function post(scene: Scene, body: Record<string, unknown>) {
  const response = await scene.backend.fetch(request('POST', base, body))
  return { response, text: response.text() }
}

/** A settled moment: every pending callback of this turn of the event loop has run. */
const settle = () => new Promise((resolve) => setImmediate(resolve))

async function queueIds(scene: Scene): Promise<string[]> {
  const response = await scene.backend.fetch(request('GET', `${base}/${threadId}/queue`))
  const { data } = (await response.json()) as { data: { items: { id: string }[] } }
  return data.items.map((item) => item.id)
}

/** Random ids (UUIDs) numbered by first appearance, the scene's own ids kept. */
function numberIds(files: Capture): Capture {
  const seen = new Map<string, string>()
  const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
  const out: Capture = {}
  for (const name of Object.keys(files).sort()) {
    out[name] = (files[name] ?? '').replace(uuid, (id) => {
      if (fixed.has(id)) return id
      if (!seen.has(id))
        seen.set(id, `00000000-0000-4000-8000-${String(seen.size + 1).padStart(12, '0')}`)
      return seen.get(id) as string
    })
  }
  return out
}

function headersText(response: Response): string {
  const lines = [...response.headers.entries()].map(([name, value]) => `${name}: ${value}`)
  return `HTTP/1.1 ${response.status} OK\n${lines.join('\n')}\n`
}

/** The whole scene: a running turn, a queue built, edited, reordered, steered and emptied. */
export async function captureNextEra(): Promise<Capture> {
  const gate = createGate()
  const { timers } = manualTimers()
  const backend = createPreviewChatBackend({
    dev: true,
    flavor: 'next-era',
    sleep: gate.sleep,
    timers,
    deltaMs: 0,
    now: () => Date.parse('2026-12-01T10:00:00.000Z'),
  })
  const scene: Scene = { backend, gate, files: {} }
  const push = await backend.fetch(
    new Request(`${origin}/rest/push`, { headers: { ...headers, Accept: 'text/event-stream' } }),
  )
  const pushText = push.text()
  await runScene(scene)
  await backend.close()
  scene.files['push.sse'] = await pushText
  return numberIds(scene.files)
}

async function runScene(scene: Scene): Promise<void> {
  const { files, gate } = scene
  const new1 = { sessionId: threadId, newSession: true }
  const first = await post(scene, { message: '/words 3', ...new1, messageId: messageIds.first })
  files['turn.headers.txt'] = headersText(first.response)
  while (gate.paused === 0) await settle()
  const history = await scene.backend.fetch(request('GET', `${base}/${threadId}/messages`))
  const { data } = (await history.json()) as { data: { activeExecutionId: string } }
  const running = data.activeExecutionId

  await rest(scene, 'queue-unknown-thread.json', 'GET', `${base}/no-such-thread/queue`)
  const second = await post(scene, {
    message: 'second',
    sessionId: threadId,
    messageId: messageIds.second,
  })
  const third = await post(scene, {
    message: 'third',
    sessionId: threadId,
    messageId: messageIds.third,
  })
  const [b, c] = (await queueIds(scene)) as [string, string]
  await rest(scene, 'queue.json', 'GET', `${base}/${threadId}/queue`)
  await rest(scene, 'queue-edit.json', 'PATCH', `${base}/${threadId}/queue/${c}`, {
    message: 'third, edited',
  })
  await rest(scene, 'queue-edit-blank-400.json', 'PATCH', `${base}/${threadId}/queue/${c}`, {
    message: ' ',
  })
  await rest(scene, 'queue-bad-id-400.json', 'PATCH', `${base}/${threadId}/queue/0`, {
    message: 'x',
  })
  await rest(scene, 'queue-reorder.json', 'POST', `${base}/${threadId}/queue/${c}/reorder`, {
    targetQueueId: b,
    expectedQueueIds: [b, c],
  })
  await rest(
    scene,
    'queue-reorder-changed-409.json',
    'POST',
    `${base}/${threadId}/queue/${c}/reorder`,
    {
      targetQueueId: b,
      expectedQueueIds: [b, c],
    },
  )

  const steered = await post(scene, { message: 'steer me', sessionId: threadId })
  const d = (await queueIds(scene)).at(-1) as string
  await rest(
    scene,
    'queue-steer-not-steerable-409.json',
    'POST',
    `${base}/${threadId}/queue/${d}/steer`,
    {
      executionId: 'not-the-running-one',
    },
  )
  await rest(scene, 'queue-steer.json', 'POST', `${base}/${threadId}/queue/${d}/steer`, {
    executionId: running,
  })
  await rest(scene, 'queue-with-steer.json', 'GET', `${base}/${threadId}/queue`)
  await rest(scene, 'queue-edit-steering-409.json', 'PATCH', `${base}/${threadId}/queue/${d}`, {
    message: 'x',
  })
  gate.step()
  files['turn-steered.sse'] = await steered.text

  const removed = await post(scene, { message: 'remove me', sessionId: threadId })
  const e = (await queueIds(scene)).at(-1) as string
  await rest(scene, 'queue-remove.json', 'DELETE', `${base}/${threadId}/queue/${e}`)
  await rest(scene, 'queue-remove-unknown-404.json', 'DELETE', `${base}/${threadId}/queue/${e}`)
  files['turn-removed.sse'] = await removed.text

  const duplicate = await post(scene, {
    message: 'second',
    sessionId: threadId,
    messageId: messageIds.second,
  })
  files['turn-duplicate.sse'] = await duplicate.text

  gate.open()
  files['turn.sse'] = await first.text
  files['turn-queued-while-busy.sse'] = await third.text
  files['turn-queued-last.sse'] = await second.text
  await rest(scene, 'queue-edit-started-409.json', 'PATCH', `${base}/${threadId}/queue/${b}`, {
    message: 'x',
  })
  await rest(scene, 'queue-remove-started-409.json', 'DELETE', `${base}/${threadId}/queue/${b}`)
  await rest(scene, 'queue-empty.json', 'GET', `${base}/${threadId}/queue`)
  await rest(scene, 'history.json', 'GET', `${base}/${threadId}/messages`)
}
