import './websocket-placeholder'
import {
  capabilitiesHeader,
  parseMessageQueue,
  queueEventFrom,
  turnEventFrom,
} from '@preview-chat/core/contract'
import { describe, expect, it } from 'vitest'
import { setupPreviewChatServer } from '../vitest'

const chat = setupPreviewChatServer({
  flavor: 'next-era',
  deltaMs: 0,
  snapshotMs: 5,
  user: 'alice',
})

const chatUrl = 'http://localhost/rest/projects/p1/agents/v2/a1/chat'

/** The `type` of each event of an SSE body, read by core's turn and queue parsers. */
function typesOf(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => {
      const raw: unknown = JSON.parse(line.slice(6))
      const queued = queueEventFrom(raw)
      if (queued.kind === 'event') return queued.event.type
      const turn = turnEventFrom(raw)
      return turn.kind === 'event' ? turn.event.type : `unparsed ${turn.kind}`
    })
}

describe('the next-era flavor, mounted in MSW [R-QUEUE-MSW]', () => {
  it('queues and takes up a message, serves the queue routes, and dedupes its messageId', async () => {
    expect(chat.mock.backend.flavor).toBe('next-era')
    const body = {
      message: 'Hello',
      sessionId: crypto.randomUUID(),
      newSession: true,
      messageId: crypto.randomUUID(),
    }
    const post = () =>
      fetch(chatUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    const answer = await post()
    expect(answer.headers.get(capabilitiesHeader)).toBe('message-dedupe, message-queue')
    const types = typesOf(await answer.text())
    expect(types.slice(0, 2)).toEqual(['message-queued', 'execution-started'])
    expect(types.at(-1)).toBe('done')
    const queue = await fetch(`${chatUrl}/${body.sessionId}/queue`)
    expect(parseMessageQueue(await queue.json())).toEqual({
      success: true,
      value: { steerableExecutionId: null, items: [] },
    })
    expect(typesOf(await (await post()).text())).toEqual(['done'])
  })
})
