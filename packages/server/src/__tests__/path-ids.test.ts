import { afterEach, describe, expect, it } from 'vitest'
import { RestError } from '../http'
import { checkRouteIds, matchRoute } from '../routes/match'
import {
  chat,
  chatPath,
  closeHosts,
  collectUnhandled,
  errorBodyOf,
  readHistory,
  resume,
  send,
  startHost,
  turn,
} from './harness'

// Issue 19, row h: thread ids travel as one URL path segment, and a URL parser collapses '.' and
// '..', so a thread recorded under one of them could never be read, followed or stopped. The
// server refuses them where they reach it whole (a body), as the client does (pathSegmentIdProblem).
const unhandled = collectUnhandled()
afterEach(closeHosts)

const collapsing = ['.', '..']

/** A POST through `node:http`, with what it answered (a 4xx is the contract's JSON error). */
function postRaw(port: number, path: string, body: unknown) {
  return send(
    { port },
    {
      method: 'POST',
      path,
      headers: { Authorization: 'Bearer alice', 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    },
  )
}

describe('an id that a URL path segment cannot carry [R-SERVER-PATH-IDS]', () => {
  it("refuses a message whose sessionId is '.' or '..' with a 400, and records nothing", async () => {
    const server = await startHost()
    for (const sessionId of collapsing) {
      for (const newSession of [true, undefined]) {
        const answer = await postRaw(server.port, chatPath, {
          message: 'hello',
          sessionId,
          ...(newSession && { newSession }),
        })
        expect(answer.status, `${sessionId} ${newSession}`).toBe(400)
        const body = errorBodyOf(answer)
        expect(body.code).toBe('bad_request')
        expect(body.message).toContain('sessionId')
        expect(body.message).toContain('path segment')
      }
    }
    // An empty one is refused by the contract's parser already.
    const empty = await postRaw(server.port, chatPath, { message: 'hi', sessionId: '' })
    expect([empty.status, errorBodyOf(empty).code]).toEqual([400, 'bad_request'])
    expect(server.backend.inspect.threads()).toEqual([])
    expect(server.backend.inspect.executions()).toEqual([])
    expect(unhandled).toEqual([])
  })

  it("refuses a resume whose runId is '.' or '..' with a 400 (a run is cancelled by its path)", async () => {
    const server = await startHost()
    for (const runId of collapsing) {
      const answer = await postRaw(server.port, `${chatPath}/resume`, {
        runId,
        toolCallId: 'call-1',
        resumeData: { approved: true },
      })
      expect(answer.status, runId).toBe(400)
      expect(errorBodyOf(answer)).toMatchObject({ code: 'bad_request' })
    }
  })

  it('still accepts ids that only look like them, and reads them back by their path', async () => {
    const server = await startHost()
    for (const sessionId of ['...', '.a', 'a..', '%2e', ' .']) {
      const reader = await turn(chat(server, { message: '/words 1', sessionId, newSession: true }))
      await reader.rest()
      const history = await readHistory(server, encodeURIComponent(sessionId))
      expect(
        history.messages.map((message) => message.role),
        sessionId,
      ).toEqual(['user', 'assistant'])
    }
    // A resume with an ordinary unknown run id is still a 404, not a 400.
    const unknown = await resume(server, { runId: 'run-x', toolCallId: 'c', resumeData: null })
    expect(unknown.status).toBe(404)
  })

  it("never addresses a thread named '.' or '..' through a path: the URL collapses the segment", async () => {
    const server = await startHost()
    for (const segment of ['.', '..', '%2e', '%2E%2e', '.%2E']) {
      const answer = await send(server, {
        path: `${chatPath}/${segment}/messages`,
        headers: { Authorization: 'Bearer alice' },
      })
      // `chat/./messages` is `chat/messages`, `chat/../messages` is `agents/v2/a1/messages`.
      expect(answer.status, segment).toBe(404)
      expect(errorBodyOf(answer)).toMatchObject({ code: 'route_not_found' })
    }
  })

  it('refuses such a route param too, should a raw path bring one un-collapsed', () => {
    for (const path of [
      '/projects/p/agents/v2/a/chat/../messages',
      '/projects/p/agents/v2/a/chat/./executions/e',
      '/projects/p/agents/v2/a/chat/t/executions/..',
      '/projects/p/agents/v2/a/chat/runs/.',
      '/projects/../agents/v2/a/chat',
      '/projects/p/agents/v2/./chat',
    ]) {
      const route = matchRoute(path)
      expect(route, path).toBeDefined()
      let thrown: unknown
      try {
        checkRouteIds(route!)
      } catch (error) {
        thrown = error
      }
      expect(thrown, path).toBeInstanceOf(RestError)
      expect((thrown as RestError).code).toBe('bad_request')
      expect((thrown as RestError).status).toBe(400)
    }
    expect(() =>
      checkRouteIds(matchRoute('/projects/p/agents/v2/a/chat/.../messages')!),
    ).not.toThrow()
  })
})
