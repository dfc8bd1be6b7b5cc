/** The recorded history: wire-contract.md, "History snapshot". */
import { recordedMessageId } from '@preview-chat/core/contract'
import { describe, json } from '../context'
import type { Check } from './check'

export const recordChecks: Check[] = [
  {
    rule: 'R-WIRE-SNAPSHOT',
    name: 'a history read is { messages, openSuspensions, activeExecutionId } in the contract shapes',
    async run(c) {
      const turn = await c.fullTurn()
      const { answer, strict } = await c.read('owner', turn.threadId)
      if (strict === undefined) return c.fail('a 200 history answer', describe(answer))
      if (!strict.success) {
        return c.fail('a snapshot core parses without filling anything in', strict.error.message)
      }
      const { value } = strict
      c.expect(value.activeExecutionId === null, 'activeExecutionId null once the turn ended', () =>
        json(value.activeExecutionId),
      )
      const badTime = value.messages.find((m) => Number.isNaN(Date.parse(m.createdAt)))
      c.expect(badTime === undefined, 'createdAt an ISO-8601 date', () => json(badTime?.createdAt))
    },
  },
  {
    rule: 'R-WIRE-MESSAGE-IDS',
    name: 'one execution is one turn: ${executionId}:user with the message, then ${executionId}:assistant',
    async run(c) {
      const turn = await c.fullTurn()
      const { snapshot } = await c.read('owner', turn.threadId)
      const messages = snapshot?.messages ?? []
      const user = recordedMessageId(turn.executionId, 'user')
      const assistant = recordedMessageId(turn.executionId, 'assistant')
      c.expect(
        json(messages.map((m) => [m.id, m.role])) ===
          json([
            [user, 'user'],
            [assistant, 'assistant'],
          ]),
        json([
          [user, 'user'],
          [assistant, 'assistant'],
        ]),
        () => json(messages.map((m) => [m.id, m.role])),
      )
      const text = messages[0]?.content.find((part) => part.type === 'text')
      c.expect(text?.type === 'text' && text.text === c.shortMessage, `the user's text`, () =>
        json(messages[0]?.content),
      )
    },
  },
  {
    rule: 'R-WIRE-ORDER',
    name: "a thread's turns are read oldest first, each user message before its answer",
    async run(c) {
      const one = await c.fullTurn()
      const two = await c.fullTurn({ threadId: one.threadId, newSession: false })
      const { snapshot } = await c.read('owner', one.threadId)
      const expected = [one, two].flatMap((turn) => [
        recordedMessageId(turn.executionId, 'user'),
        recordedMessageId(turn.executionId, 'assistant'),
      ])
      const got = snapshot?.messages.map((m) => m.id) ?? []
      c.expect(json(got) === json(expected), json(expected), () => json(got))
    },
  },
  {
    rule: 'R-WIRE-NO-STREAM-IDS',
    name: 'snapshots carry no live text-stream ids',
    async run(c) {
      const turn = await c.fullTurn()
      const ids = turn.stream.events.flatMap((e) =>
        e.type === 'text-start' || e.type === 'reasoning-start' ? [e.id] : [],
      )
      const { answer } = await c.read('owner', turn.threadId)
      const leaked = ids.filter((id) => answer.text.includes(json(id)))
      c.expect(leaked.length === 0, 'none of the stream ids in the snapshot', () => json(leaked))
      return ids.length === 0 ? 'the turn had no text stream' : `${ids.length} stream ids`
    },
  },
  {
    rule: 'R-SERVER-CONDITIONAL',
    name: 'a history read with an ETag is answered 304 to If-None-Match while nothing changed',
    async run(c) {
      const turn = await c.fullTurn()
      const path = c.client.paths.messages(turn.threadId)
      const first = await c.client.request('GET', path, 'owner')
      const etag = first.headers.get('etag')
      if (etag === null) {
        throw new c.NotApplicable('the server sends no ETag (conditional reads are its choice)')
      }
      const again = await c.client.request('GET', path, 'owner', {
        headers: { 'If-None-Match': etag, 'Cache-Control': 'max-age=0' },
      })
      c.expect(again.status === 304 && again.text === '', '304 with no body', () => describe(again))
    },
  },
]
