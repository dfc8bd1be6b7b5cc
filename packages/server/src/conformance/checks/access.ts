/**
 * Who may do what, and how refusals look: wire-contract.md, "JSON envelope", "Push notifications"
 * and "Ownership"; the spec's "Other users cannot read or cancel a private preview turn".
 */
import { parseRestError, type PushMessage } from '@preview-chat/core/contract'
import type { Answer, Caller } from '../client'
import { describe, json, type CheckContext } from '../context'
import type { Check } from './check'

/** A REST refusal: `status`, a JSON error body, and no turn stream. */
function expectRefusal(c: CheckContext, what: string, answer: Answer, statuses: number[]) {
  c.expect(statuses.includes(answer.status), `${what}: ${statuses.join(' or ')}`, () =>
    describe(answer),
  )
  const body = parseRestError(answer.json)
  c.expect(body.success, `${what}: a JSON error body { code, message, hint? }`, () =>
    describe(answer),
  )
}

/** What a caller gets for a thread: a read, a Stop of an execution, a message naming it. */
async function probe(c: CheckContext, caller: Caller, threadId: string, executionId: string) {
  const read = await c.client.request('GET', c.client.paths.messages(threadId), caller)
  const stop = await c.client.request('DELETE', c.client.paths.stop(threadId, executionId), caller)
  const posted = await c.client.turn(c.client.paths.chat, caller, {
    message: c.shortMessage,
    sessionId: threadId,
  })
  const post =
    'answer' in posted
      ? `${posted.answer.status}`
      : ((await posted.stream.next().then((e) => (e?.type === 'error' ? json(e) : e?.type))) ??
        'no event')
  if ('stream' in posted) posted.close()
  return { read: read.status, stop: stop.status, post, readAnswer: read }
}

export const accessChecks: Check[] = [
  {
    rule: 'R-SERVER-PRIVATE',
    name: "another user can neither read, stop nor post to a user's thread: each answers as for an unknown one (404)",
    async run(c) {
      const turn = await c.startTurn(c.script.longMessage ?? c.shortMessage)
      const theirs = await probe(c, 'other', turn.threadId, turn.executionId)
      const unknown = await probe(c, 'other', c.newThreadId(), turn.executionId)
      c.expect(theirs.read === 404, 'a read: 404 (never 403)', () => describe(theirs.readAnswer))
      const same = (['read', 'stop', 'post'] as const).filter((k) => theirs[k] !== unknown[k])
      c.expect(same.length === 0, 'the answers for an unknown thread', () =>
        same.map((k) => `${k}: ${theirs[k]} (unknown: ${unknown[k]})`).join(', '),
      )
      c.expect(theirs.stop === 404, 'a Stop: 404 (never 403)', () => `${theirs.stop}`)
      const { snapshot } = await c.read('owner', turn.threadId)
      const executions = new Set(snapshot?.messages.map((m) => m.executionId))
      c.expect(executions.size === 1, "the owner's record unchanged: one execution", () =>
        json([...executions]),
      )
    },
  },
  {
    rule: 'R-SERVER-PUSH',
    name: 'push over SSE announces agentExecutionUpdated to the owner, never to another user',
    async run(c) {
      const owner = await c.client.push('owner')
      const other = await c.client.push('other')
      c.expect(
        owner.status === 200 && other.status === 200,
        'GET /push as SSE: 200',
        () => `${owner.status}, ${other.status} (${owner.headers.get('content-type')})`,
      )
      const turn = await c.fullTurn()
      const about = (messages: typeof owner.messages) =>
        messages.filter(
          (m) => m.data.threadId === turn.threadId && m.data.executionId === turn.executionId,
        )
      await c.poll('an agentExecutionUpdated for the turn on the owner’s push channel', async () =>
        about(owner.messages).length > 0 ? true : undefined,
      )
      // What the other user's channel would have heard by now, it would have heard.
      await c.sleep(200)
      const [{ data }] = about(owner.messages) as [PushMessage]
      c.expect(
        about(other.messages).length === 0 &&
          other.messages.every((m) => m.data.threadId !== turn.threadId),
        'nothing about the thread on the other user’s channel',
        () => json(about(other.messages)),
      )
      owner.close()
      other.close()
      return `${about(owner.messages).length} announcements (${data.projectId}/${data.agentId})`
    },
  },
  {
    rule: 'R-SERVER-SCOPES',
    name: 'every route refuses a request without credentials with 401',
    async run(c) {
      const { paths } = c.client
      const threadId = c.newThreadId()
      const answers: [string, Answer][] = [
        ['GET messages', await c.client.request('GET', paths.messages(threadId), 'anonymous')],
        ['POST chat', await postAnswer(c, 'anonymous')],
        [
          'DELETE execution',
          await c.client.request('DELETE', paths.stop(threadId, 'e1'), 'anonymous'),
        ],
        ['DELETE run', await c.client.request('DELETE', paths.run('r1'), 'anonymous')],
      ]
      for (const [what, answer] of answers) expectRefusal(c, what, answer, [401])
      const push = await c.client.push('anonymous')
      push.close()
      c.expect(push.status === 401, 'GET /push: 401', () => `${push.status}`)
    },
  },
  {
    rule: 'R-SERVER-SCOPES',
    name: 'a user with agent:read only is refused 403 on POST and Stop',
    async run(c) {
      if (!c.hasCaller('readOnly')) {
        throw new c.NotApplicable('needs a user with agent:read only (--read-only-user)')
      }
      const turn = await c.startTurn(c.shortMessage)
      expectRefusal(c, 'POST chat', await postAnswer(c, 'readOnly'), [403])
      const stop = await c.client.request(
        'DELETE',
        c.client.paths.stop(turn.threadId, turn.executionId),
        'readOnly',
      )
      expectRefusal(c, 'DELETE execution', stop, [403, 404])
    },
  },
  {
    rule: 'R-WIRE-REQUEST-BODIES',
    name: 'a blank message, a body that is not JSON and a resume without runId are a typed 400 before any stream',
    async run(c) {
      const { paths } = c.client
      const bodies: [string, string, unknown][] = [
        [
          'a blank message',
          paths.chat,
          { message: '   ', sessionId: c.newThreadId(), newSession: true },
        ],
        ['a body that is not JSON', paths.chat, '{"message": '],
        ['a resume without runId', paths.resume, { toolCallId: 't1', resumeData: null }],
      ]
      for (const [what, path, body] of bodies) {
        expectRefusal(c, what, await c.client.request('POST', path, 'owner', { body }), [400])
      }
    },
  },
  {
    rule: 'R-SERVER-ERRORS',
    name: 'a body over 1 MiB is refused with a typed 413 (or 400), and the server goes on serving',
    async run(c) {
      const message = 'x'.repeat(1024 * 1024 + 1)
      const answer = await c.client.request('POST', c.client.paths.chat, 'owner', {
        body: { message, sessionId: c.newThreadId(), newSession: true },
      })
      expectRefusal(c, 'a 1 MiB message', answer, [413, 400])
      await c.fullTurn()
    },
  },
  {
    rule: 'R-WIRE-ERRORS',
    name: 'error answers are exactly { code, message, hint? }: no stack trace, nothing else',
    async run(c) {
      const answers: [string, Answer][] = [
        [
          '401',
          await c.client.request('GET', c.client.paths.messages(c.newThreadId()), 'anonymous'),
        ],
        ['404', await c.client.request('GET', c.client.paths.messages(c.newThreadId()), 'owner')],
        [
          '400',
          await c.client.request('POST', c.client.paths.chat, 'owner', { body: { message: '' } }),
        ],
      ]
      for (const [what, answer] of answers) {
        const body = answer.json as Record<string, unknown> | undefined
        const keys = body && typeof body === 'object' ? Object.keys(body) : []
        const extra = keys.filter((key) => !['code', 'message', 'hint'].includes(key))
        const typed =
          (typeof body?.code === 'string' || typeof body?.code === 'number') &&
          typeof body.message === 'string' &&
          extra.length === 0
        c.expect(typed, `the ${what} body { code, message, hint? }`, () => describe(answer))
      }
    },
  },
]

function postAnswer(c: CheckContext, caller: Caller): Promise<Answer> {
  return c.client.request('POST', c.client.paths.chat, caller, {
    body: { message: c.shortMessage, sessionId: c.newThreadId(), newSession: true },
  })
}
