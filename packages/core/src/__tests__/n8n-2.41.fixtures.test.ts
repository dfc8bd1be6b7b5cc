/**
 * What the released n8n 2.41.1 really answered (fixtures/n8n-2.41, captured from a running n8n),
 * replayed through the client: the turn stream, each history answer, the errors, the missing Stop
 * route and the push stream. The spec's protocol is the target; this one must work too.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it, vi } from 'vitest'
import { parsePushMessage } from '../contract'
import { readSse } from '../internal'
import { key, settle, setup, snapshot, useFakeTimersInEachTest } from './harness'

useFakeTimersInEachTest()

const fixture = (name: string) =>
  readFileSync(new URL(`../../../../fixtures/n8n-2.41/${name}`, import.meta.url), 'utf8')
const json = (name: string) => JSON.parse(fixture(name)) as { status: number; body: unknown }
const eventStream = (name: string) =>
  new Response(fixture(name), { headers: { 'content-type': 'text/event-stream; charset=UTF-8' } })

/** A session that sent a message to a thread with no history yet (n8n: 404 before the first output). */
async function posted(t: ReturnType<typeof setup>, text = 'Tell me fifty words') {
  t.server.answerRead(json('history-unknown-thread-404.json'))
  await settle()
  expect(t.session.getState().notFound).toBe(true)
  t.session.setDraft(text)
  const result = t.session.submit()
  await settle()
  return { result }
}

describe('n8n 2.41 fixtures, replayed through the client', () => {
  it('turn.sse: streams the turn without execution-started and takes the id done names [R-N8N-NO-STARTED]', async () => {
    const warnings: string[] = []
    const t = setup({ onWarning: (message) => warnings.push(message) })
    const { result } = await posted(t)
    t.server.answerPost(eventStream('turn.sse'))
    expect(await result).toEqual({ outcome: 'accepted', executionId: null })
    await settle()
    const [user, assistant] = t.session.getState().messages
    expect(user?.id).toBe('mAaZcGyePtNFWPef:user')
    expect(assistant?.id).toBe('mAaZcGyePtNFWPef:assistant')
    const text = assistant?.content[0]
    expect(text?.type === 'text' && text.text.trim().split(' ')).toHaveLength(50)
    expect(t.session.getState()).toMatchObject({
      draft: '',
      server: { keepsTurnOnDisconnect: false, stopsByExecutionId: false },
    })
    expect(warnings).toEqual([expect.stringMatching(/began with "start-step"/)])
    t.session.dispose()
  })

  it('history-before-output.json: a 404 right after this tab posted is "not recorded yet", not "not found" [R-N8N-NOT-RECORDED-YET]', async () => {
    const t = setup()
    await posted(t)
    const stream = t.server.openStream()
    stream.raw(':ok\n\n')
    stream.send({ type: 'start-step' })
    await settle()
    // The stream goes quiet and a notification comes: the read answers 404 (no output yet).
    stream.close()
    await settle()
    t.server.answerRead(json('history-before-output.json'))
    await settle()
    // Not found yet, and no error meanwhile: the thread is coming [R-READ-404-NO-ERROR].
    expect(t.session.getState()).toMatchObject({ notFound: false, readError: null })
    // It tries again, and the thread is there.
    await vi.advanceTimersByTimeAsync(1_000)
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(json('history-mid-turn.json'))
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'following', readError: null })
    t.session.dispose()
  })

  it('history-mid-turn.json: no activeExecutionId, no assistant message yet — a turn runs, the gate is shut [R-N8N-HISTORY R-GATE-RUNNING]', async () => {
    // Read a second after the message was sent (the fixture's clock).
    const t = setup({ now: () => Date.parse('2026-11-30T06:36:36.000Z') })
    t.server.answerRead(json('history-mid-turn.json'))
    await settle()
    expect(t.session.getState()).toMatchObject({
      status: 'following',
      activeExecutionId: 'mAaZcGyePtNFWPef',
      isRunning: true,
      canSubmit: false,
    })
    expect(t.session.getState().messages[0]?.executionStatus).toBe('running')
    t.session.dispose()
  })

  it('history-after-client-closed-stream.json: the closed POST cancelled the turn; nothing runs [R-N8N-RELOAD-CANCELS]', async () => {
    const t = setup()
    t.server.answerRead(json('history-after-client-closed-stream.json'))
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle', activeExecutionId: null })
    expect(t.session.getState().messages.map((m) => m.executionStatus)).toEqual([
      'cancelled',
      'cancelled',
    ])
    t.session.dispose()
  })

  it('history-two-concurrent-turns.json: two turns the server let run at once, both ended [R-N8N-GATE]', async () => {
    const t = setup()
    t.server.answerRead(json('history-two-concurrent-turns.json'))
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle', activeExecutionId: null })
    expect(t.session.getState().messages).toHaveLength(4)
    t.session.dispose()
  })

  it('no-auth-401.json and post-blank-message-400.json become typed errors with the server’s words [R-N8N-ERRORS]', async () => {
    const t = setup()
    t.server.answerRead(json('no-auth-401.json'))
    await settle()
    expect(t.session.getState().readError).toMatchObject({ code: 'unauthorized', status: 401 })
    expect(t.session.getState().readError?.message).toMatch(/HTTP 401: Unauthorized\./)
    t.session.dispose()

    const u = setup({ isNew: true })
    u.session.setDraft('x')
    const result = u.session.submit()
    await settle()
    const blank = json('post-blank-message-400.json')
    u.server.answerPost(Response.json(blank.body, { status: blank.status }))
    expect(await result).toMatchObject({
      outcome: 'failed',
      error: { code: 'bad_request', serverCode: 'custom' },
    })
    expect(u.session.getState().draft).toBe('x')
    u.session.dispose()
  })

  it('delete-executions-route-404.html: no Stop route, so Stop closes the POST of the tab that holds it [R-N8N-STOP-BY-CLOSING]', async () => {
    const t = setup()
    t.server.answerRead(snapshot([]))
    await settle()
    t.session.setDraft('Q')
    void t.session.submit()
    await settle()
    // A server that speaks the spec's first event, so the client tries Stop by id first.
    const stream = t.server.openStream()
    stream.send({
      type: 'execution-started',
      executionId: 'mAaZcGyePtNFWPef',
      sessionId: key.threadId,
    })
    await settle()
    const stopped = t.session.stop()
    await settle()
    t.server.answerStopRaw(
      new Response(fixture('delete-executions-route-404.html'), {
        status: 404,
        headers: { 'content-type': 'text/html; charset=utf-8' },
      }),
    )
    expect(await stopped).toEqual({ cancelRequested: true })
    expect(stream.cancelled).toBe(true)
    expect(t.session.getState()).toMatchObject({
      status: 'stopping',
      server: { stopsByExecutionId: false },
    })
    t.session.dispose()
  })

  it('runs-cancel-unknown-run.json: the checkpoint path answers cancelled false [R-N8N-RUNS]', async () => {
    const t = setup()
    t.server.answerRead(
      snapshot([], null, [{ toolCallId: 'c1', runId: 'run-1', suspendPayload: { toolName: 'x' } }]),
    )
    await settle()
    const stopped = t.session.stop()
    await settle()
    const answer = json('runs-cancel-unknown-run.json')
    t.server.answerStop(answer.body, answer.status)
    expect(await stopped).toEqual({ cancelRequested: false })
    t.session.dispose()
  })

  it('push.sse: every agentExecutionUpdated parses, for each thread of the project [R-N8N-PUSH]', async () => {
    const threads = new Set<string>()
    await readSse(eventStream('push.sse').body!, (messages) => {
      for (const data of messages) {
        const parsed = parsePushMessage(data)
        expect(parsed.kind).toBe('message')
        if (parsed.kind === 'message') threads.add(parsed.message.data.threadId)
      }
      return true
    })
    expect(threads.size).toBeGreaterThan(0)
  })
})
