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

  // Issue 27, row i: an app that builds an id from text cut inside an emoji. No URL can carry a
  // lone surrogate (encodeURIComponent throws), so the thread could never be read, followed or
  // stopped: it is refused before any request, by the client and the server alike.
  it.each(['chat-\ud83d', '\ude00', 'a\udc00b', '\ud83d\ud83d', '\ude00\ud83d'])(
    'refuses %j, which holds a lone surrogate no URL can carry [R-SERVER-PATH-IDS]',
    (id) => {
      expect(() => encodeURIComponent(id)).toThrow(URIError)
      expect(pathSegmentIdProblem(id)).toMatch(/lone UTF-16 surrogate/)
      const chat = parseChatRequest({ message: 'Hi', sessionId: id, newSession: true })
      expect(!chat.success && chat.error.code).toBe('bad_request')
      const resume = parseResumeRequest({ runId: id, toolCallId: 'c', resumeData: 1 })
      expect(!resume.success && resume.error.code).toBe('bad_request')
    },
  )

  it.each(['...', '.a', '%2e', 'a/b', 'thread 1', 'Ω', 'chat-\ud83d\ude00', '\u{1F600}', '\uFFFD'])(
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
