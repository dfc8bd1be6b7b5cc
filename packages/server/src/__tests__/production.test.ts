import { afterEach, describe, expect, it } from 'vitest'
import type { PreviewChatAgent } from '../agent'
import type { PreviewChatLogEntry } from '../log'
import type { PreviewChatServer } from '../node/host'
import {
  chat,
  chatPath,
  closeHosts,
  createGate,
  post,
  readHistory,
  startHost,
  turn,
  waitFor,
} from './harness'

afterEach(closeHosts)

/** A new thread's first message, refused with `status` and `Retry-After`; its error body. */
async function refusedTurn(server: PreviewChatServer, sessionId: string, status: number) {
  const refused = await post(server, chatPath, { message: 'more', sessionId, newSession: true })
  expect(refused.status).toBe(status)
  expect(refused.headers.get('retry-after')).toBe('5')
  return (await refused.json()) as { code: string }
}

/** An agent that writes a little, then pauses until the test's gate lets it go on. */
const holding: PreviewChatAgent = async (_input, context) => {
  context.emit({ type: 'text-delta', id: context.id('text'), delta: 'Working' })
  for (let step = 0; step < 50; step++) await context.pause()
  return { kind: 'done' }
}

describe('the production limits, each shown in the record [R-SERVER-LIMITS]', () => {
  it('a turn longer than limits.maxTurnMs ends as error turn_too_long, with a reason', async () => {
    const gate = createGate()
    const server = await startHost({ sleep: gate.sleep, agent: holding, limits: { maxTurnMs: 30 } })
    const reader = await turn(chat(server, { message: 'hi', sessionId: 'long', newSession: true }))
    const { executionId } = await reader.until('execution-started')
    const last = (await reader.rest()).at(-1)
    expect(last).toEqual({
      type: 'error',
      message: 'The turn ran longer than 30 ms and was stopped.',
      errorCode: 'turn_too_long',
    })
    const [execution] = await server.backend.store.listExecutions()
    expect(execution).toMatchObject({
      id: executionId,
      status: 'error',
      errorCode: 'turn_too_long',
    })
    const history = await readHistory(server, 'long')
    expect(history.activeExecutionId).toBeNull()
    expect(history.messages.map((message) => message.executionStatus)).toEqual(['error', 'error'])
    expect(history.messages[1]?.executionError).toBe(execution?.error)
  })

  it('one turn more than limits.maxRunningTurnsPerUser is a 429 too_many_turns with Retry-After', async () => {
    const gate = createGate()
    const server = await startHost({
      sleep: gate.sleep,
      agent: holding,
      limits: { maxRunningTurnsPerUser: 1 },
    })
    const first = await turn(chat(server, { message: 'one', sessionId: 'a1', newSession: true }))
    await first.until('execution-started')
    const refused = await refusedTurn(server, 'a2', 429)
    expect(refused).toEqual({
      code: 'too_many_turns',
      message: 'You have too many turns running.',
      hint: expect.any(String),
    })
    // Nothing of the refused turn is recorded; another user is not limited by Alice's turns.
    expect(await server.backend.store.listThreads()).toHaveLength(1)
    const bob = await turn(chat(server, { message: 'b', sessionId: 'b1', newSession: true }, 'bob'))
    await bob.until('execution-started')
    gate.open()
    await Promise.all([first.rest(), bob.rest()])
    const again = await turn(chat(server, { message: 'two', sessionId: 'a2', newSession: true }))
    expect((await again.rest()).at(-1)?.type).toBe('done')
  })
})

describe('graceful shutdown: no new turns, then running ones end as error [R-SERVER-SHUTDOWN]', () => {
  it('refuses new turns with 503, lets a turn end in the grace period, ends the rest as error', async () => {
    const held = createGate()
    const server = await startHost({ sleep: held.sleep, agent: holding })
    const stuck = await turn(chat(server, { message: 'stuck', sessionId: 's1', newSession: true }))
    const stuckId = (await stuck.until('execution-started')).executionId
    const shutdown = server.backend.shutdown({ graceMs: 50 })
    expect((await refusedTurn(server, 's2', 503)).code).toBe('shutting_down')
    await shutdown
    expect((await stuck.rest()).at(-1)).toEqual({
      type: 'error',
      message: 'The server shut down before the turn ended.',
      errorCode: 'server_shutdown',
    })
    const executions = await server.backend.store.listExecutions()
    expect(executions.map((each) => [each.id, each.status, each.errorCode])).toEqual([
      [stuckId, 'error', 'server_shutdown'],
    ])
    expect((await server.backend.store.listThreads()).map((t) => t.activeExecutionId)).toEqual([
      null,
    ])
  })

  it('a turn that ends within the grace period ends as it would have', async () => {
    const gate = createGate()
    const server = await startHost({ sleep: gate.sleep, agent: holding })
    const reader = await turn(chat(server, { message: 'ok', sessionId: 'g1', newSession: true }))
    await reader.until('execution-started')
    const shutdown = server.backend.shutdown({ graceMs: 60_000 })
    gate.open()
    await shutdown
    expect((await reader.rest()).at(-1)?.type).toBe('done')
    expect((await server.backend.store.listExecutions())[0]?.status).toBe('success')
  })
})

describe('no stack trace or secret in an answer; the log has the detail [R-SERVER-NO-LEAKS]', () => {
  it('an agent that throws: the stream and the record say so generically, the log says what', async () => {
    const secret = 'sk-live-0123456789'
    const log: PreviewChatLogEntry[] = []
    const server = await startHost({
      logger: (entry) => log.push(entry),
      agent: async (_input, context) => {
        context.emit({ type: 'text-delta', id: context.id('text'), delta: 'Let me see' })
        await context.pause()
        throw new Error(`upstream refused key ${secret}`)
      },
    })
    const reader = await turn(chat(server, { message: 'hi', sessionId: 'x1', newSession: true }))
    const { executionId } = await reader.until('execution-started')
    const events = await reader.rest()
    expect(events.at(-1)).toEqual({
      type: 'error',
      message: 'The agent failed on this turn.',
      errorCode: 'agent_crashed',
    })
    const answers = JSON.stringify([events, await readHistory(server, 'x1')])
    const record = JSON.stringify(await server.backend.store.listExecutions())
    for (const text of [answers, record]) {
      expect(text).not.toContain(secret)
      expect(text).not.toMatch(/at .*\.ts:\d+/)
    }
    const crash = log.find((entry) => entry.event === 'agent_crashed')
    expect(crash).toMatchObject({
      level: 'error',
      executionId,
      threadId: 'x1',
      userId: 'alice',
      error: { message: `upstream refused key ${secret}` },
    })
    expect(crash?.error?.stack).toContain('production.test.ts')
    await waitFor(() => log.some((entry) => entry.event === 'turn_ended'), 'the end logged')
    expect(log.map((entry) => entry.event)).toEqual(['turn_started', 'agent_crashed', 'turn_ended'])
    expect(JSON.parse(JSON.stringify(log))).toEqual(log)
  })
})
