/**
 * Suspended turns and delegations, which only some agents make: the spec's "resumed interactions",
 * "Suspended turns use the existing checkpoint cancellation path" and the 4,000-character budget.
 */
import { parseRunCancelAnswer, type SuspendedPayload } from '@preview-chat/core/contract'
import { describe, json, type CheckContext } from '../context'
import type { Check } from './check'

const suspends = 'suspends a turn for a person (--script reference)'

/** Runs the script's suspending message to its end; returns the thread and the suspension. */
async function suspended(c: CheckContext) {
  const { message } = c.needs('suspend', suspends)
  const turn = await c.startTurn(message)
  const events = await turn.stream.rest()
  const last = events.at(-1)
  if (last?.type !== 'tool-call-suspended') {
    return c.fail('the stream to end with tool-call-suspended', json(last ?? 'no event'))
  }
  return { turn, payload: last.payload }
}

/**
 * Resumes a suspension with the script's approval, as `caller` (the owner by default); `bounded`:
 * with the approval whose answer lasts a second or more, where the script has one. The plain
 * answer or the stream.
 */
function resume(
  c: CheckContext,
  payload: SuspendedPayload,
  { caller = 'owner', bounded = false }: { caller?: 'owner' | 'other'; bounded?: boolean } = {},
) {
  const { approve, approveBounded } = c.needs('suspend', suspends)
  return c.client.turn(c.client.paths.resume, caller, {
    runId: payload.runId,
    toolCallId: payload.toolCallId,
    resumeData: bounded && approveBounded !== undefined ? approveBounded : approve,
  })
}

/** Expects the thread's record to list `count` open suspensions. */
async function expectOpen(c: CheckContext, threadId: string, count: number) {
  const { openSuspensions } = await c.snapshotOf('owner', threadId)
  c.expect(openSuspensions.length === count, `${count} open suspensions`, () =>
    json(openSuspensions),
  )
}

/** Another user's resume of `payload`: its status, or its stream's first event (type and code). */
async function refusal(c: CheckContext, payload: SuspendedPayload): Promise<string> {
  const resumed = await resume(c, payload, { caller: 'other' })
  if ('answer' in resumed) return `${resumed.answer.status}`
  const first = await resumed.stream.next()
  resumed.close()
  return first?.type === 'error'
    ? `an in-band error ${first.errorCode ?? ''}`.trim()
    : `${first?.type}`
}

export const suspendChecks: Check[] = [
  {
    rule: 'R-SERVER-SUSPEND',
    name: 'a suspending turn ends with tool-call-suspended, lists the suspension, and resumes as a new execution',
    async run(c) {
      const { turn, payload } = await suspended(c)
      const before = await c.read('owner', turn.threadId)
      const open = before.snapshot?.openSuspensions ?? []
      c.expect(
        open.some((s) => s.runId === payload.runId && s.toolCallId === payload.toolCallId),
        `openSuspensions with run ${payload.runId}`,
        () => json(open),
      )
      const resumed = await resume(c, payload)
      if ('answer' in resumed) return c.fail('a turn stream', describe(resumed.answer))
      const next = await c.begin(resumed, turn.threadId, 'owner', new Set([turn.executionId]))
      c.expect(next.executionId !== turn.executionId, 'a new execution', () => next.executionId)
      await next.stream.rest()
      const after = await c.waitEnded(turn.threadId, next.executionId)
      c.expect(after.openSuspensions.length === 0, 'no open suspension once resumed', () =>
        json(after.openSuspensions),
      )
    },
  },
  {
    rule: 'R-TURN-SURVIVES-RESUME',
    name: 'a resumed turn whose POST stream is closed goes on and ends recorded',
    async run(c) {
      const { turn, payload } = await suspended(c)
      const resumed = await resume(c, payload, { bounded: true })
      if ('answer' in resumed) return c.fail('a turn stream', describe(resumed.answer))
      const next = await c.begin(resumed, turn.threadId, 'owner', new Set([turn.executionId]))
      await c.expectSurvivesClose(next)
    },
  },
  {
    rule: 'R-STOP-SUSPENDED',
    name: 'a suspended run is cancelled through DELETE …/chat/runs/:runId, closing the suspension',
    async run(c) {
      const { turn, payload } = await suspended(c)
      const answer = await c.client.request('DELETE', c.client.paths.run(payload.runId), 'owner')
      const parsed = parseRunCancelAnswer(answer.json)
      c.expect(parsed.success && parsed.value.cancelled, '200 { cancelled: true }', () =>
        describe(answer),
      )
      await expectOpen(c, turn.threadId, 0)
    },
  },
  {
    rule: 'R-SERVER-PRIVATE',
    name: "another user's resume or cancellation of a user's suspended run answers as for an unknown run",
    async run(c) {
      const { turn, payload } = await suspended(c)
      const unknown = { ...payload, runId: `${payload.runId}-unknown` }
      const [theirs, none] = [await refusal(c, payload), await refusal(c, unknown)]
      c.expect(theirs === none, `a resume answered as for an unknown run (${none})`, () => theirs)
      const cancel = (runId: string) =>
        c.client.request('DELETE', c.client.paths.run(runId), 'other').then(describe)
      const [cancelled, noneCancelled] = [await cancel(payload.runId), await cancel(unknown.runId)]
      c.expect(
        cancelled.replaceAll(payload.runId, unknown.runId) === noneCancelled,
        `a cancellation answered as for an unknown run (${noneCancelled})`,
        () => cancelled,
      )
      await expectOpen(c, turn.threadId, 1)
    },
  },
  {
    rule: 'R-SERVER-DELEGATION',
    name: 'a delegation records at most 4,000 characters of child text and reasoning',
    async run(c) {
      const { message, limit } = c.needs(
        'delegation',
        'delegates to a child agent (--script reference)',
      )
      const turn = await c.startTurn(message)
      await turn.stream.rest()
      const snapshot = await c.waitEnded(turn.threadId, turn.executionId)
      const traces = snapshot.messages.flatMap((m) =>
        m.content.flatMap((p) => (p.type === 'tool-call' && p.childTrace ? [p.childTrace] : [])),
      )
      c.expect(traces.length > 0, 'a tool call with a childTrace', () => 'none')
      const chars = traces.map(
        (t) => t.text.length + t.reasoningSegments.reduce((n, s) => n + s.content.length, 0),
      )
      c.expect(
        chars.every((n) => n <= limit),
        `at most ${limit} characters each`,
        () => json(chars),
      )
    },
  },
]
