import { describe, expect, it } from 'vitest'
import { parseCapabilities, formatCapabilities } from '../capabilities'
import { PreviewChatError } from '../errors'
import { parseTurnEvent } from '../events'
import { parsePushMessage, parseQueuePushMessage } from '../push'
import {
  isQueueId,
  parseMessageQueue,
  parseQueueEditRequest,
  parseQueueEvent,
  parseQueueItem,
  parseQueueRemoveAnswer,
  parseQueueReorderRequest,
  parseQueueSteerRequest,
  queueConflictOf,
  queueEventFrom,
} from '../queue'
import { parseChatRequest } from '../requests'

const uuid = '0b9c6f2e-3d1a-4c5b-9e8f-7a6b5c4d3e2f'

describe('the queue protocol parses into typed values, and leaves what every server speaks as it was [R-QUEUE-WIRE]', () => {
  it('message-queued, message-steered and budget-notice are queue events; parseTurnEvent reads only message-queued (an acceptance every client must take)', () => {
    const queued = { type: 'message-queued', queueId: '1', sessionId: 't1' }
    const others = [
      { type: 'message-steered', queueId: '2', executionId: 'e1', message: 'also this' },
      { type: 'budget-notice', code: 'near_limit' },
    ]
    for (const event of [queued, ...others])
      expect(parseQueueEvent(JSON.stringify(event))).toEqual({ kind: 'event', event })
    expect(parseTurnEvent(JSON.stringify(queued))).toEqual({ kind: 'event', event: queued })
    for (const event of others)
      expect(parseTurnEvent(JSON.stringify(event))).toEqual({ kind: 'ignored', type: event.type })
  })

  it('a turn event is no queue event; a malformed queue event is a typed error', () => {
    expect(queueEventFrom({ type: 'done' })).toEqual({ kind: 'ignored', type: 'done' })
    const bad = parseQueueEvent('{"type":"message-queued","queueId":"01","sessionId":"t1"}')
    expect(bad.kind).toBe('invalid')
    expect(bad.kind === 'invalid' && PreviewChatError.isInstance(bad.error)).toBe(true)
    expect(parseQueueEvent('not json').kind).toBe('invalid')
  })

  it('queueEventFrom reads execution-started with its inputMessageIds; parseTurnEvent parses it as before', () => {
    const started = {
      type: 'execution-started',
      executionId: 'e1',
      sessionId: 't1',
      inputMessageIds: ['m1'],
    }
    expect(queueEventFrom(started)).toEqual({ kind: 'event', event: started })
    expect(queueEventFrom({ ...started, inputMessageIds: undefined })).toEqual({
      kind: 'event',
      event: { type: 'execution-started', executionId: 'e1', sessionId: 't1' },
    })
    expect(queueEventFrom({ ...started, inputMessageIds: [1] }).kind).toBe('invalid')
    expect(parseTurnEvent(JSON.stringify(started))).toEqual({
      kind: 'event',
      event: { type: 'execution-started', executionId: 'e1', sessionId: 't1' },
    })
  })

  it('the queue resource, an item, and a removal answer, wrapped or bare', () => {
    const item = {
      id: '3',
      message: 'next',
      attachments: [],
      steeringExecutionId: null,
      createdAt: '2026-12-01T10:00:00.000Z',
    }
    const queue = { steerableExecutionId: 'e1', items: [item] }
    expect(parseMessageQueue({ data: queue })).toEqual({ success: true, value: queue })
    expect(parseMessageQueue({ items: [], steerableExecutionId: null }).success).toBe(true)
    expect(parseQueueItem(item)).toEqual({ success: true, value: item })
    expect(
      parseMessageQueue({ steerableExecutionId: null, items: [{ ...item, id: 'x' }] }).success,
    ).toBe(false)
    expect(parseQueueRemoveAnswer({ data: { removed: true } }).success).toBe(true)
    expect(parseQueueRemoveAnswer({ removed: false }).success).toBe(false)
  })

  it('agentMessageQueueUpdated is read by its own reader; readPushMessage still ignores it', () => {
    const message = {
      type: 'agentMessageQueueUpdated',
      data: { projectId: 'p1', agentId: 'a1', threadId: 't1' },
    }
    expect(parseQueuePushMessage(JSON.stringify(message))).toEqual({ kind: 'message', message })
    expect(parsePushMessage(JSON.stringify(message))).toEqual({
      kind: 'ignored',
      type: 'agentMessageQueueUpdated',
    })
    expect(parseQueuePushMessage('{"type":"agentMessageQueueUpdated","data":{}}').kind).toBe(
      'invalid',
    )
  })

  it('queue ids are numeric strings; the route bodies are checked', () => {
    expect(['1', '42'].every(isQueueId)).toBe(true)
    expect(['0', '01', '-1', '1.5', '', 'a'].some(isQueueId)).toBe(false)
    expect(parseQueueEditRequest({ message: '  ' }).success).toBe(false)
    expect(parseQueueEditRequest({ message: 'new text' }).success).toBe(true)
    expect(parseQueueReorderRequest({ targetQueueId: '2', expectedQueueIds: ['1'] }).success).toBe(
      false,
    )
    expect(
      parseQueueReorderRequest({ targetQueueId: '2', expectedQueueIds: ['1', '2'] }).success,
    ).toBe(true)
    expect(parseQueueSteerRequest({ executionId: 'e1' }).success).toBe(true)
    expect(parseQueueSteerRequest({}).success).toBe(false)
  })

  it('a 409 of a queue route is a typed conflict; another error is none', () => {
    const conflict = (serverCode: string | number) =>
      new PreviewChatError('conflict', 'x', { status: 409, serverCode })
    expect(queueConflictOf(conflict('queue_item_started'))).toBe('queue_item_started')
    expect(queueConflictOf(conflict(409))).toBe('queue_changed')
    expect(queueConflictOf(new PreviewChatError('not_found', 'x', { status: 404 }))).toBeNull()
  })
})

describe('a client message id, and the capabilities a server announces [R-QUEUE-DEDUPE-WIRE]', () => {
  it('a chat body may carry a UUID messageId, which needs a sessionId', () => {
    expect(parseChatRequest({ message: 'hi', sessionId: 't1', messageId: uuid })).toEqual({
      success: true,
      value: { message: 'hi', sessionId: 't1', messageId: uuid },
    })
    expect(parseChatRequest({ message: 'hi', messageId: uuid }).success).toBe(false)
    expect(parseChatRequest({ message: 'hi', sessionId: 't1', messageId: 'm-1' }).success).toBe(
      false,
    )
    expect(parseChatRequest({ message: 'hi', sessionId: 't1' }).success).toBe(true)
  })

  it('the capabilities header reads as flags; no header is no capability', () => {
    expect(parseCapabilities('message-dedupe, message-queue, later-thing')).toEqual({
      dedupesMessages: true,
      queuesMessages: true,
    })
    expect(parseCapabilities(null)).toEqual({ dedupesMessages: false, queuesMessages: false })
    expect(formatCapabilities(['message-queue', 'message-dedupe'])).toBe(
      'message-dedupe, message-queue',
    )
  })
})
