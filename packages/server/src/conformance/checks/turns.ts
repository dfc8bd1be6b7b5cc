/** The turn stream and a turn's life: wire-contract.md, "The turn stream (SSE)" and the spec's first paragraphs. */
import { describe, isTerminal, json, longNeed } from '../context'
import type { Check } from './check'

const terminalTypes = 'done, tool-call-suspended or error'

export const turnChecks: Check[] = [
  {
    rule: 'R-WIRE-SSE-FRAMING',
    name: 'a turn stream has the SSE headers, opens with :ok and carries one JSON event per data block',
    async run(c) {
      const turn = await c.fullTurn()
      const { headers } = turn.stream.response
      const header = (name: string) => headers.get(name) ?? '(none)'
      c.expect(
        header('content-type').startsWith('text/event-stream'),
        'Content-Type: text/event-stream',
        () => header('content-type'),
      )
      c.expect(
        /no-cache/.test(header('cache-control')) && /no-transform/.test(header('cache-control')),
        'Cache-Control: no-cache, no-transform',
        () => header('cache-control'),
      )
      c.expect(header('x-accel-buffering') === 'no', 'X-Accel-Buffering: no', () =>
        header('x-accel-buffering'),
      )
      c.expect(
        turn.stream.opening.startsWith(':ok'),
        'the stream to open with the comment :ok',
        () => json(turn.stream.opening),
      )
      c.expect(turn.stream.invalid.length === 0, 'every data block a turn event', () =>
        turn.stream.invalid.join('; '),
      )
      return `${turn.stream.events.length} events`
    },
  },
  {
    rule: 'R-WIRE-STARTED',
    name: 'the first event of an accepted turn is execution-started with executionId and sessionId',
    async run(c) {
      const turn = await c.fullTurn()
      const first = turn.first
      c.expect(first?.type === 'execution-started', 'execution-started first', () => json(first))
      if (first?.type !== 'execution-started') return
      c.expect(first.sessionId === turn.threadId, `sessionId ${turn.threadId}`, () =>
        json(first.sessionId),
      )
      c.expect(first.executionId.length > 0, 'a non-empty executionId', () => json(first))
    },
  },
  {
    rule: 'R-WIRE-TERMINAL',
    name: 'a turn ends with done, tool-call-suspended or error, and nothing follows it',
    async run(c) {
      const { stream } = await c.fullTurn()
      const at = stream.events.findIndex(isTerminal)
      c.expect(
        at >= 0,
        `a ${terminalTypes} event`,
        () => `a stream that closed after ${stream.events.map((e) => e.type).join(', ')}`,
      )
      c.expect(at === stream.events.length - 1, 'the terminal event last', () =>
        stream.events
          .slice(at)
          .map((e) => e.type)
          .join(', '),
      )
    },
  },
  {
    rule: 'R-SERVER-END-RECORDED',
    name: 'a read right after the terminal event shows the turn ended',
    async run(c) {
      const turn = await c.fullTurn()
      const snapshot = await c.snapshotOf('owner', turn.threadId)
      const statuses = c.ofExecution(snapshot, turn.executionId).map((m) => m.executionStatus)
      c.expect(
        c.hasEnded(snapshot, turn.executionId),
        'the execution recorded as ended',
        () => `activeExecutionId ${json(snapshot.activeExecutionId)}, statuses ${json(statuses)}`,
      )
    },
  },
  {
    rule: 'R-SERVER-ACTIVE-EARLY',
    name: 'a read right after execution-started shows activeExecutionId, before any output',
    async run(c) {
      const turn = await c.startTurn(c.script.longMessage ?? c.shortMessage)
      c.expect(turn.first?.type === 'execution-started', 'execution-started first', () =>
        json(turn.first),
      )
      const snapshot = await c.snapshotOf('owner', turn.threadId)
      if (
        snapshot.activeExecutionId !== turn.executionId &&
        c.hasEnded(snapshot, turn.executionId)
      ) {
        c.needs('longMessage', 'answers for longer than a read takes (--long-message)')
      }
      c.expect(
        snapshot.activeExecutionId === turn.executionId,
        `activeExecutionId ${json(turn.executionId)}`,
        () => json(snapshot.activeExecutionId),
      )
    },
  },
  {
    rule: 'R-READ-LATEST',
    name: 'reads while a turn runs show its output so far, and later reads newer output',
    async run(c) {
      const message = c.needs('longMessage', longNeed)
      const turn = await c.startTurn(message)
      const chars = (snapshot: Awaited<ReturnType<typeof c.waitRunning>>) =>
        JSON.stringify(
          c.ofExecution(snapshot, turn.executionId).filter((m) => m.role === 'assistant'),
        ).length
      const first = chars(await c.waitRunning(turn))
      await c.poll('a later read, the turn still running, that holds more output', async () => {
        const { snapshot } = await c.read('owner', turn.threadId)
        return snapshot && c.isRunning(snapshot, turn.executionId) && chars(snapshot) > first
          ? true
          : undefined
      })
    },
  },
  {
    rule: 'R-TURN-SURVIVES',
    name: 'a turn whose POST stream is closed mid-answer goes on and ends recorded',
    async run(c) {
      const message = c.needs(
        'boundedMessage',
        'answers for a second or more, then ends by itself (--long-message)',
      )
      await c.expectSurvivesClose(await c.startTurn(message))
    },
  },
  {
    rule: 'R-SERVER-ONE-TURN',
    name: 'a second message while a turn runs is refused in-band with turn_already_running, recording nothing',
    async run(c) {
      const turn = await c.longTurn()
      const second = await c.client.turn(c.client.paths.chat, 'owner', {
        message: c.shortMessage,
        sessionId: turn.threadId,
      })
      c.expect('stream' in second, 'an in-band refusal (200, text/event-stream)', () =>
        'answer' in second ? describe(second.answer) : '',
      )
      if (!('stream' in second)) return
      // Its first event says it all (a turn the server took would run as long as the first).
      c.waitingFor = 'the first event of the second message’s stream'
      const first = await second.stream.next()
      second.close()
      c.expect(
        first?.type === 'error' && first.errorCode === 'turn_already_running',
        'an error event with errorCode turn_already_running, before any execution-started',
        () => json(first ?? 'no event'),
      )
      const { snapshot } = await c.read('owner', turn.threadId)
      const executions = new Set(snapshot?.messages.map((m) => m.executionId))
      c.expect(executions.size === 1, 'one execution in the record', () => json([...executions]))
    },
  },
]
