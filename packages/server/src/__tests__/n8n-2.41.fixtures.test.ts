/**
 * Every file of fixtures/n8n-2.41 (what a released n8n 2.41.1 answered, captured with curl)
 * replayed against the emulation (`flavor: 'n8n-2.41'`) over real HTTP: the same requests at the
 * same moments of a turn, then the answers compared: statuses, headers, event sequences, and every
 * body's keys (present, absent, in order) and values wherever they do not depend on the run
 * (ids and times are compared by pattern).
 */
import { createParser } from 'eventsource-parser'
import { readdirSync, readFileSync } from 'node:fs'
import type { TurnEvent } from '@preview-chat/core/contract'
import { afterEach, describe, expect, it } from 'vitest'
import { scriptedAgent, type PreviewChatAgent } from '../agent'
import { closeHosts, collectUnhandled, createGate, send, waitFor, type Answer } from './harness'
import {
  n8nExecutionId,
  n8nHistory,
  n8nSend,
  n8nTurn,
  openN8nPushStream,
  startN8nHost,
} from './n8n-harness'

const unhandled = collectUnhandled()
afterEach(closeHosts)

const directory = new URL('../../../../fixtures/n8n-2.41/', import.meta.url)
const fixture = (name: string) => readFileSync(new URL(name, directory), 'utf8')
const json = (name: string) =>
  JSON.parse(fixture(name)) as { status: number; body: Record<string, unknown> }

// The captures' scene: their project, agent and thread ids, and their user's first message.
const projectId = 'JOjlApLQT2v9sOCT'
const agentId = 'blaR2mgf27HEeA8W'
const threadId = 'd37ffaa6-30f6-4f61-a4d6-018f1b755aaa'
const chatPath = `/rest/projects/${projectId}/agents/v2/${agentId}/chat`

/** The captures' model answered every message with `word1 … word50`; so does this agent. */
const fiftyWords: PreviewChatAgent = (input, context) =>
  scriptedAgent(
    input.kind === 'message' ? { kind: 'message', message: '/words 50' } : input,
    context,
  )

const startReplayHost = (options: Parameters<typeof startN8nHost>[0] = {}) =>
  startN8nHost({ agent: fiftyWords, ...options })

interface Frames {
  comments: string[]
  events: Record<string, unknown>[]
}

/**
 * An SSE body's frames, read by eventsource-parser: its comments, and its `data:` events parsed.
 * n8n frames each event as one `data: ` line or one comment, each ended by a blank line; a body
 * framed otherwise is refused.
 */
function framesOf(text: string): Frames {
  if (!/^(?:(?::|data: )[^\n]*\n\n)*$/.test(text))
    throw new Error(`not framed as n8n frames events: ${JSON.stringify(text.slice(0, 200))}`)
  const frames: Frames = { comments: [], events: [] }
  const parser = createParser({
    onEvent: (event) => void frames.events.push(JSON.parse(event.data) as Record<string, unknown>),
    onComment: (comment) => void frames.comments.push(`:${comment}`),
  })
  parser.feed(text)
  return frames
}

/** A captured header block (`HTTP/1.1 200 OK`, then `Name: value` lines), names lower-cased. */
function headersOf(name: string): { status: number; headers: Record<string, string> } {
  const [statusLine, ...lines] = fixture(name).trim().split('\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { status: Number(statusLine?.split(' ')[1]), headers }
}

/** The headers an emulated answer shares with a capture (all but those of the moment). */
function sharedHeaders(captured: Record<string, string>, answer: Answer, leftOut: string[]) {
  const names = Object.keys(captured).filter((name) => !leftOut.includes(name))
  const pick = (source: Record<string, unknown>) =>
    Object.fromEntries(names.map((name) => [name, source[name]]))
  return { captured: pick(captured), emulated: pick(answer.headers) }
}

/**
 * Every key path of a JSON value, in order, with the type found there: which keys are present
 * and absent, at every depth (array items each in turn).
 */
function keyPaths(value: unknown, at = '$'): string[] {
  if (Array.isArray(value))
    return [`${at}: array`, ...value.flatMap((v, i) => keyPaths(v, `${at}[${i}]`))]
  if (value !== null && typeof value === 'object') {
    return [
      `${at}: object`,
      ...Object.entries(value).flatMap(([key, v]) => keyPaths(v, `${at}.${key}`)),
    ]
  }
  return [`${at}: ${value === null ? 'null' : typeof value}`]
}

/** A history body with the run's own values (execution ids, times) replaced by placeholders. */
function withoutRunValues(body: unknown): unknown {
  const ids = new Map<string, string>()
  const placeholder = (id: string) => {
    if (!ids.has(id)) ids.set(id, `<execution ${ids.size + 1}>`)
    return ids.get(id)
  }
  return JSON.parse(JSON.stringify(body), (key, value: unknown) => {
    if (key === 'executionId' && typeof value === 'string') {
      expect(value).toMatch(n8nExecutionId)
      return placeholder(value)
    }
    if (key === 'id' && typeof value === 'string') {
      const [executionId, role] = value.split(':')
      expect(value).toBe(`${executionId}:${role}`)
      return `${placeholder(executionId!)}:${role}`
    }
    if (key === 'createdAt' && typeof value === 'string') {
      expect(new Date(value).toISOString()).toBe(value)
      return '<createdAt>'
    }
    return value
  })
}

const textOf = (message: unknown) =>
  ((message as { content: { text: string }[] }).content[0] ?? { text: '' }).text

/** Posts a turn in the captures' thread and waits until the gate holds it at its first pause. */
async function heldTurn(
  server: Awaited<ReturnType<typeof startReplayHost>>,
  gate: ReturnType<typeof createGate>,
  message: string,
  signal?: AbortSignal,
) {
  const paused = gate.paused
  const reader = await n8nTurn(
    server,
    { message, sessionId: threadId },
    { path: chatPath, ...(signal && { signal }) },
  )
  await waitFor(() => gate.paused === paused + 1, 'the turn to run')
  return reader
}

const replayed = new Set<string>()
const replays = (...names: string[]) => {
  for (const name of names) replayed.add(name)
  return names.join(' + ')
}

describe('fixtures/n8n-2.41 replayed against the n8n-2.41 flavor [R-N8N-EMULATION]', () => {
  it(replays('turn.sse', 'turn.headers.txt'), async () => {
    const server = await startReplayHost()
    const answer = await n8nSend(server, {
      method: 'POST',
      path: chatPath,
      body: { message: 'Tell me fifty words', sessionId: threadId },
    })
    const captured = framesOf(fixture('turn.sse'))
    const emulated = framesOf(answer.body)
    expect(emulated.comments).toEqual(captured.comments)
    // The same events in the same order: start-step, text-start, 50 × text-delta, text-end,
    // finish-step, done. The same keys on each, the same deltas; ids are the run's own.
    expect(emulated.events.map((event) => event.type)).toEqual(
      captured.events.map((event) => event.type),
    )
    expect(emulated.events.map((event) => Object.keys(event))).toEqual(
      captured.events.map((event) => Object.keys(event)),
    )
    const deltas = (frames: Frames) => frames.events.map((event) => event.delta)
    expect(deltas(emulated)).toEqual(deltas(captured))
    const [capturedDone, emulatedDone] = [captured.events.at(-1), emulated.events.at(-1)]
    expect(emulatedDone?.sessionId).toBe(capturedDone?.sessionId)
    expect(capturedDone?.executionId).toMatch(n8nExecutionId)
    expect(emulatedDone?.executionId).toMatch(n8nExecutionId)

    const head = headersOf('turn.headers.txt')
    expect(answer.status).toBe(head.status)
    const headers = sharedHeaders(head.headers, answer, ['date'])
    expect(headers.emulated).toEqual(headers.captured)
  })

  it(replays('turn-cut-by-client.sse', 'history-after-client-closed-stream.json'), async () => {
    const gate = createGate()
    const server = await startReplayHost({ sleep: gate.sleep })
    const captured = framesOf(fixture('turn-cut-by-client.sse'))
    const client = new AbortController()
    const reader = await heldTurn(server, gate, 'cut me', client.signal)
    // The client reads as many events as the captured one did, then closes the stream.
    await reader.until('text-start')
    while (reader.events.length < captured.events.length) {
      await waitFor(() => gate.paused === 1, 'the next pause')
      gate.step()
      await reader.until('text-delta')
    }
    client.abort()
    expect(reader.events.map((event) => event.type)).toEqual(
      captured.events.map((event) => event.type),
    )
    await waitFor(
      () => server.backend.inspect.executions()[0]?.status === 'cancelled',
      'the turn to be cancelled',
    )

    const after = json('history-after-client-closed-stream.json')
    const read = await n8nHistory(server, threadId, chatPath)
    expect(read.status).toBe(after.status)
    expect(keyPaths(read.body)).toEqual(keyPaths(after.body))
    const statuses = (body: Record<string, unknown>) =>
      (body.data as { messages: { executionStatus?: string }[] }).messages.map(
        (message) => message.executionStatus,
      )
    expect(statuses(read.body)).toEqual(statuses(after.body))
    expect(statuses(read.body)).toEqual([undefined, 'cancelled'])
    // What the client saw is kept; n8n had recorded a word more than its client read.
    const seen = (frames: TurnEvent[] | Record<string, unknown>[]) =>
      frames.map((event) => ('delta' in event ? event.delta : '')).join('')
    const messages = (body: Record<string, unknown>) =>
      (body.data as { messages: unknown[] }).messages
    expect(textOf(messages(after.body)[1]).startsWith(seen(captured.events))).toBe(true)
    expect(textOf(messages(read.body)[1]).startsWith(seen(reader.events))).toBe(true)
    expect(seen(reader.events)).toBe(seen(captured.events))
  })

  it(replays('history-before-output.json'), async () => {
    const gate = createGate()
    // No snapshot before the agent's first output is recorded (none at all, with this pace).
    const server = await startReplayHost({ sleep: gate.sleep, snapshotMs: 60_000 })
    const reader = await heldTurn(server, gate, 'Tell me fifty words')
    const captured = json('history-before-output.json')
    const read = await n8nHistory(server, threadId, chatPath)
    expect(read.status).toBe(captured.status)
    expect(keyPaths(read.body)).toEqual(keyPaths(captured.body))
    expect({ ...read.body, stacktrace: '' }).toEqual({ ...captured.body, stacktrace: '' })
    expect(read.body.stacktrace).toMatch(/^ResponseError: /)
    gate.open()
    await reader.rest()
  })

  it(replays('history-mid-turn.json'), async () => {
    const gate = createGate()
    const server = await startReplayHost({ sleep: gate.sleep, snapshotMs: 5 })
    const reader = await heldTurn(server, gate, 'Tell me fifty words')
    await waitFor(() => server.backend.inspect.recordings.length > 0, 'the first snapshot')
    const captured = json('history-mid-turn.json')
    const read = await n8nHistory(server, threadId, chatPath)
    expect(read.status).toBe(captured.status)
    expect(keyPaths(read.body)).toEqual(keyPaths(captured.body))
    expect(withoutRunValues(read.body)).toEqual(withoutRunValues(captured.body))
    gate.open()
    await reader.rest()
  })

  it(replays('history-two-concurrent-turns.json', 'push.sse', 'push.headers.txt'), async () => {
    const gate = createGate()
    const server = await startReplayHost({ sleep: gate.sleep, snapshotMs: 5 })
    const push = await openN8nPushStream(server)
    const first = await heldTurn(server, gate, 'Tell me fifty words')
    // Once the thread is recorded: before that a second first message races its creation (one
    // turn, an in-band error: "two first POSTs at once" in n8n-2.41.test.ts).
    await waitFor(() => server.backend.inspect.recordings.length >= 1, 'the first record')
    const competing = await heldTurn(server, gate, 'competing')
    await waitFor(() => server.backend.inspect.recordings.length >= 2, 'both turns recorded')
    gate.open()
    const ends = await Promise.all([first.rest(), competing.rest()])

    // Both ran to success in one thread, as n8n let them.
    const captured = json('history-two-concurrent-turns.json')
    const read = await n8nHistory(server, threadId, chatPath)
    expect(read.status).toBe(captured.status)
    expect(keyPaths(read.body)).toEqual(keyPaths(captured.body))
    expect(withoutRunValues(read.body)).toEqual(withoutRunValues(captured.body))

    // The push stream: the same framing and message shape, several messages per execution, each
    // execution's last one paired with another (n8n announces the end twice).
    const executionIds = ends.map(
      (events) => (events.at(-1) as { executionId: string }).executionId,
    )
    await waitFor(
      () =>
        executionIds.every((id) => {
          const own = push.messages.filter((message) => message.data.executionId === id)
          return own.length >= 3 && server.backend.inspect.running().length === 0
        }),
      'every announcement',
    )
    push.close()
    const capturedPush = fixture('push.sse')
    expect(capturedPush.startsWith(':ok\n\n')).toBe(true)
    expect(push.text().startsWith(':ok\n\n')).toBe(true)
    const capturedFrames = framesOf(capturedPush)
    const emulatedFrames = framesOf(push.text())
    expect(emulatedFrames.comments).toEqual(capturedFrames.comments)
    for (const frames of [capturedFrames, emulatedFrames]) {
      for (const message of frames.events) {
        expect(keyPaths(message)).toEqual(keyPaths(capturedFrames.events[0]))
        expect(message).toMatchObject({
          type: 'agentExecutionUpdated',
          data: { projectId, agentId, threadId },
        })
      }
      const sequence = frames.events.map(
        (message) => (message.data as { executionId: string }).executionId,
      )
      const executions = [...new Set(sequence)]
      expect(executions).toHaveLength(2)
      for (const id of executions) {
        expect(sequence.filter((each) => each === id).length).toBeGreaterThanOrEqual(3)
        expect(sequence[sequence.lastIndexOf(id) - 1]).toBe(id)
      }
    }
    expect(
      new Set(emulatedFrames.events.map((m) => (m.data as { executionId: string }).executionId)),
    ).toEqual(new Set(executionIds))

    const head = headersOf('push.headers.txt')
    expect(push.response.status).toBe(head.status)
    const answer = await send(server, {
      path: '/rest/push?pushRef=headers',
      headers: { Cookie: 'n8n-auth=alice' },
      untilFirstChunk: true,
    })
    // `Vary: Accept-Encoding` is n8n's compression middleware, which the emulation does not have.
    const headers = sharedHeaders(head.headers, answer, ['date', 'vary'])
    expect(headers.emulated).toEqual(headers.captured)
  })

  it(replays('history-unknown-thread-404.json'), async () => {
    const server = await startReplayHost()
    const captured = json('history-unknown-thread-404.json')
    const read = await n8nHistory(server, '00000000-0000-4000-8000-000000000000', chatPath)
    expect(read.status).toBe(captured.status)
    expect(keyPaths(read.body)).toEqual(keyPaths(captured.body))
    expect({ ...read.body, stacktrace: '' }).toEqual({ ...captured.body, stacktrace: '' })
  })

  it(replays('no-auth-401.json'), async () => {
    const server = await startReplayHost()
    const captured = json('no-auth-401.json')
    const answer = await n8nSend(server, {
      path: `${chatPath}/${threadId}/messages`,
      headers: {},
    })
    expect([answer.status, JSON.parse(answer.body)]).toEqual([captured.status, captured.body])
  })

  it(replays('post-blank-message-400.json'), async () => {
    const server = await startReplayHost()
    const captured = json('post-blank-message-400.json')
    for (const message of ['', '   ']) {
      const answer = await n8nSend(server, {
        method: 'POST',
        path: chatPath,
        body: { message, sessionId: threadId },
      })
      expect([answer.status, JSON.parse(answer.body)]).toEqual([captured.status, captured.body])
    }
  })

  it(replays('runs-cancel-unknown-run.json'), async () => {
    const server = await startReplayHost()
    const captured = json('runs-cancel-unknown-run.json')
    const answer = await n8nSend(server, { method: 'DELETE', path: `${chatPath}/runs/unknown-run` })
    expect([answer.status, JSON.parse(answer.body)]).toEqual([captured.status, captured.body])
  })

  it(replays('delete-executions-route-404.html'), async () => {
    const server = await startReplayHost()
    const [comment, ...page] = fixture('delete-executions-route-404.html').split('\n')
    const status = Number(comment?.match(/HTTP (\d+)/)?.[1])
    const path = page.join('\n').match(/<pre>Cannot DELETE (\S+)<\/pre>/)?.[1]
    expect(path).toBe(`${chatPath}/${threadId}/executions/mAaZcGyePtNFWPef`)
    const answer = await n8nSend(server, { method: 'DELETE', path: path! })
    expect(answer.status).toBe(status)
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8')
    // Byte for byte, but for the capture's trailing newline.
    expect(answer.body).toBe(page.join('\n').replace(/\n*$/, '\n'))
  })

  it('covers every file of fixtures/n8n-2.41 (a new capture needs a replay here)', () => {
    const files = readdirSync(directory).filter((name) => name !== 'README.md')
    expect([...replayed].sort()).toEqual(files.sort())
    expect(unhandled).toEqual([])
  })
})
