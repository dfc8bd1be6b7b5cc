/** Stop by execution id: the spec's Stop paragraph and wire-contract.md, "Stop". */
import { parseStopAnswer, type StopAnswer } from '@preview-chat/core/contract'
import { describe, json, longNeed, type CheckContext } from '../context'
import type { Check } from './check'

/** `DELETE …/executions/:executionId` from a connection of its own; its answer as core reads it. */
async function stop(c: CheckContext, threadId: string, executionId: string): Promise<StopAnswer> {
  const answer = await c.client.request(
    'DELETE',
    c.client.paths.stop(threadId, executionId),
    'owner',
  )
  const parsed = answer.status === 200 ? parseStopAnswer(answer.json) : undefined
  if (!parsed?.success) return c.fail('200 { cancelRequested: boolean }', describe(answer))
  return parsed.value
}

export const stopChecks: Check[] = [
  {
    rule: 'R-SERVER-STOP-RECORD',
    name: 'Stop by execution id from a second connection answers cancelRequested: true; the record ends cancelled',
    async run(c) {
      const turn = await c.longTurn()
      const answer = await stop(c, turn.threadId, turn.executionId)
      c.expect(answer.cancelRequested, '{ cancelRequested: true }', () => json(answer))
      const snapshot = await c.waitEnded(turn.threadId, turn.executionId)
      const statuses = c.ofExecution(snapshot, turn.executionId).map((m) => m.executionStatus)
      c.expect(
        statuses.includes('cancelled') && snapshot.activeExecutionId === null,
        'executionStatus cancelled and activeExecutionId null',
        () => `statuses ${json(statuses)}, activeExecutionId ${json(snapshot.activeExecutionId)}`,
      )
      c.waitingFor = 'the end of the stopped turn stream'
      const events = await turn.stream.rest()
      c.expect(events.at(-1)?.type === 'done', 'the live stream to end with done', () =>
        json(events.at(-1) ?? 'no event'),
      )
    },
  },
  {
    rule: 'R-SERVER-STOP-LATE',
    name: 'a Stop of an ended execution answers cancelRequested: false',
    async run(c) {
      const turn = await c.fullTurn()
      await c.waitEnded(turn.threadId, turn.executionId)
      const answer = await stop(c, turn.threadId, turn.executionId)
      c.expect(!answer.cancelRequested, '{ cancelRequested: false }', () => json(answer))
    },
  },
  {
    rule: 'R-STOP-LATE',
    name: 'a late Stop of an ended execution cannot cancel a later one of the thread',
    async run(c) {
      c.needs('longMessage', longNeed)
      const one = await c.fullTurn()
      const two = await c.longTurn({ threadId: one.threadId, newSession: false })
      const answer = await stop(c, one.threadId, one.executionId)
      c.expect(!answer.cancelRequested, '{ cancelRequested: false }', () => json(answer))
      // The later one still runs: the record says so a moment later too.
      await c.sleep(100)
      const { snapshot } = await c.read('owner', two.threadId)
      c.expect(
        snapshot !== undefined && c.isRunning(snapshot, two.executionId),
        'the later execution still running',
        () =>
          json(snapshot && c.ofExecution(snapshot, two.executionId).map((m) => m.executionStatus)),
      )
    },
  },
]
