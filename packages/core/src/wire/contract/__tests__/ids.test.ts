/** Ids that travel as one URL path segment, refused alike by the client and the server's parsers. */
import { describe, expect, it } from 'vitest'
import { parseChatRequest, parseResumeRequest, pathSegmentIdProblem, recordedMessageId } from '..'

describe('ids in URL path segments', () => {
  it.each(['', '.', '..'])('refuses %j, which a URL would collapse or drop', (id) => {
    expect(pathSegmentIdProblem(id)).not.toBeNull()
    const chat = parseChatRequest({ message: 'Hi', sessionId: id })
    expect(!chat.success && chat.error.code).toBe('bad_request')
    const resume = parseResumeRequest({ runId: id, toolCallId: 'c', resumeData: 1 })
    expect(!resume.success && resume.error.code).toBe('bad_request')
  })

  it.each(['...', '.a', '%2e', 'a/b', 'thread 1', 'Ω'])(
    'accepts %j (it travels percent-encoded)',
    (id) => {
      expect(pathSegmentIdProblem(id)).toBeNull()
      expect(parseChatRequest({ message: 'Hi', sessionId: id }).success).toBe(true)
    },
  )

  it("builds the recorded messages' ids from the execution id", () => {
    expect(recordedMessageId('e1', 'user')).toBe('e1:user')
    expect(recordedMessageId('e1', 'assistant')).toBe('e1:assistant')
  })
})
