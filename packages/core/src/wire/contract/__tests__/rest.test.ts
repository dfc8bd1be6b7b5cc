import { describe, expect, it } from 'vitest'
import { parseChatRequest, parseResumeRequest } from '../requests'
import {
  errorCodeForStatus,
  errorFromResponse,
  parseRunCancelAnswer,
  parseStopAnswer,
} from '../rest'

describe('request bodies [R-WIRE-REQUEST-BODIES]', () => {
  it.each([
    [{ message: 'Hi' }],
    [{ message: 'Hi', sessionId: 'thread-1' }],
    [{ message: 'Hi', sessionId: 'thread-1', newSession: true }],
  ])('accepts the chat request %j', (body) => {
    expect(parseChatRequest(body)).toEqual({ success: true, value: body })
  })

  it.each([
    ['a blank message', { message: '  \n ' }],
    ['an empty message', { message: '' }],
    ['no message', { sessionId: 'x' }],
    ['newSession false', { message: 'Hi', newSession: false }],
    ['a numeric sessionId', { message: 'Hi', sessionId: 3 }],
    ['not an object', 'Hi'],
  ])('refuses a chat request with %s as bad_request', (_, body) => {
    const result = parseChatRequest(body)
    expect(!result.success && result.error.code).toBe('bad_request')
  })

  it('accepts a resume request with any resumeData', () => {
    const body = { runId: 'run-1', toolCallId: 'call-1', resumeData: { approved: true } }
    expect(parseResumeRequest(body)).toEqual({ success: true, value: body })
  })

  it.each([
    ['no runId', { toolCallId: 'c', resumeData: 1 }],
    ['an empty toolCallId', { runId: 'r', toolCallId: '', resumeData: 1 }],
    ['no resumeData key', { runId: 'r', toolCallId: 'c' }],
  ])('refuses a resume request with %s', (_, body) => {
    expect(parseResumeRequest(body).success).toBe(false)
  })
})

describe('Stop and cancel answers [R-WIRE-ENVELOPE R-STOP-ANSWER]', () => {
  it.each([[{ cancelRequested: true }], [{ data: { cancelRequested: false } }]])(
    'accepts the Stop answer %j, wrapped or bare',
    (body) => {
      expect(parseStopAnswer(body).success).toBe(true)
    },
  )

  it('accepts the run cancellation answer, wrapped or bare', () => {
    expect(parseRunCancelAnswer({ cancelled: true })).toEqual({
      success: true,
      value: { cancelled: true },
    })
    expect(parseRunCancelAnswer({ data: { cancelled: false } })).toEqual({
      success: true,
      value: { cancelled: false },
    })
  })

  it.each([[{ cancelRequested: 'yes' }], [{}], [null], [{ data: {} }]])(
    'rejects the Stop answer %j',
    (body) => {
      const result = parseStopAnswer(body)
      expect(!result.success && result.error.code).toBe('invalid_response')
    },
  )

  it('rejects a run cancellation answer without cancelled', () => {
    expect(parseRunCancelAnswer({ cancelRequested: true }).success).toBe(false)
  })
})

describe('REST errors [R-WIRE-ERRORS]', () => {
  it.each([
    [400, 'bad_request'],
    [401, 'unauthorized'],
    [403, 'forbidden'],
    [404, 'not_found'],
    [409, 'conflict'],
    [413, 'payload_too_large'],
    [500, 'server_error'],
    [503, 'server_error'],
    [418, 'http_error'],
  ] as const)('maps HTTP %i to %s', (status, code) => {
    expect(errorCodeForStatus(status)).toBe(code)
  })

  it('keeps the server code, message and hint of an error body', () => {
    const error = errorFromResponse(
      403,
      { code: 403, message: 'Missing scope agent:execute', hint: 'Ask an admin' },
      'Stop',
    )
    expect(error).toMatchObject({
      code: 'forbidden',
      status: 403,
      serverCode: 403,
      hint: 'Ask an admin',
    })
    expect(error.message).toContain('Missing scope agent:execute')
    expect(error.message).toContain('agent:execute')
  })

  it('does not double the full stop of a server message', () => {
    expect(
      errorFromResponse(503, { code: 503, message: 'Try later.' }, 'The read').message,
    ).toMatch(/^The read failed with HTTP 503: Try later\. /)
  })

  it('accepts string error codes', () => {
    expect(
      errorFromResponse(404, { code: 'not_found', message: 'Not found' }, 'The read'),
    ).toMatchObject({
      code: 'not_found',
      serverCode: 'not_found',
    })
  })

  it('tolerates a body that is not an error body', () => {
    const error = errorFromResponse(502, '<html>Bad gateway</html>', 'The history read')
    expect(error).toMatchObject({ code: 'server_error', status: 502, serverCode: undefined })
    expect(error.message).toMatch(/^The history read failed with HTTP 502\./)
  })
})
