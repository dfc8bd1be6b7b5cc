import { describe, expect, it } from 'vitest'
import { parsePushMessage } from '../push'

const message = {
  type: 'agentExecutionUpdated',
  data: { projectId: 'p1', agentId: 'a1', threadId: 't1', executionId: 'e1' },
}

describe('parsePushMessage [R-WIRE-PUSH]', () => {
  it('accepts agentExecutionUpdated', () => {
    expect(parsePushMessage(JSON.stringify(message))).toEqual({ kind: 'message', message })
  })

  it('ignores the other push messages the channel carries', () => {
    expect(parsePushMessage('{"type":"executionStarted","data":{}}')).toEqual({
      kind: 'ignored',
      type: 'executionStarted',
    })
  })

  it.each([
    ['not JSON', '{'],
    ['no type', '{"data":{}}'],
    ['no data', '{"type":"agentExecutionUpdated"}'],
    ['no threadId', JSON.stringify({ ...message, data: { ...message.data, threadId: undefined } })],
    [
      'a numeric executionId',
      JSON.stringify({ ...message, data: { ...message.data, executionId: 1 } }),
    ],
  ])('rejects %s with a typed error', (_, frame) => {
    const result = parsePushMessage(frame)
    expect(result.kind === 'invalid' && result.error.code).toBe('invalid_response')
  })
})
