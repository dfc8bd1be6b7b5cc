import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { PreviewChatServer } from '../node/host'
import {
  chat,
  closeHosts,
  errorBodyOf,
  oneConnection,
  assertProperty,
  propertyRuns,
  rawExchange,
  send,
  startHost,
  turn,
  upgradeHeaders,
  type Answer,
  collectUnhandled,
} from './harness'

// Property runs are a step budget (their numRuns), never a time limit: this timeout is only a
// backstop, sized for a loaded 2-core machine (issue 27, row h).
vi.setConfig({ testTimeout: 120_000 })

// Issue 12: arbitrary requests against the Node host, over loopback only. Bounded: a fixed number
// of runs per property, on the seeds of scripts/seeds.json. Each property prints its seed
// (`PREVIEW_CHAT_SEED=<seed>` replays it); a failure also prints the path that replays the
// failing case.
const runs = (numRuns: number) => propertyRuns(numRuns, 'src/__tests__/fuzz.test.ts')

// "The process never exits": an exception that would end it lands here and fails the test.
const unhandled = collectUnhandled()
afterEach(async () => {
  await closeHosts()
  expect(unhandled).toEqual([])
})

// --- what a client may send ---------------------------------------------------------------------

/** Mostly `usual`, sometimes `unusual`: enough well-formed requests reach the handlers. */
const mostly = <T>(usual: fc.Arbitrary<T>, unusual: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: usual, weight: 4 }, { arbitrary: unusual, weight: 1 })

const percentJunk = fc.constantFrom('%', '%E0%A4%A', '%zz', '%00', '%2F', '%C0%AF', '%%', '%FF')
const charOf = (min: number, max: number) =>
  fc.integer({ min, max }).map((code) => String.fromCharCode(code))
/** What Node's client sends in a header value: tab, printable ASCII and Latin-1. */
const headerText = fc
  .array(fc.oneof(charOf(0x20, 0x7e), charOf(0x80, 0xff), fc.constant('\t'), percentJunk), {
    maxLength: 30,
  })
  .map((parts) => parts.join(''))
/** What Node's client sends in a path: no space, no control character (Latin-1 is refused). */
const pathText = fc
  .array(mostly(charOf(0x21, 0x7e), fc.oneof(charOf(0x80, 0xff), percentJunk)), { maxLength: 12 })
  .map((parts) => parts.join(''))
const segment = fc.oneof(
  fc.constantFrom('p1', 'a1', 'chat', 'messages', 'executions', 'runs', 'resume', 'push', ''),
  fc.constantFrom('..', '.', '%2e%2e', '__proto__', 'constructor', 'hasOwnProperty'),
  percentJunk,
  pathText,
)
/** Ids: a few that earlier runs may have created (with newSession), or anything. */
const id = mostly(fc.constantFrom('t1', 't2', 't3'), fc.oneof(segment, fc.uuid()))
const chatBase = fc
  .tuple(mostly(fc.constant('p1'), segment), mostly(fc.constant('a1'), segment))
  .map(([project, agent]) => `/rest/projects/${project}/agents/v2/${agent}/chat`)
const chatPath = fc
  .tuple(
    chatBase,
    fc.oneof(
      fc.constantFrom('', '', '/resume'),
      id.map((thread) => `/${thread}/messages`),
      fc.tuple(id, id).map(([thread, execution]) => `/${thread}/executions/${execution}`),
      id.map((run) => `/runs/${run}`),
      fc.array(segment, { maxLength: 4 }).map((segments) => `/${segments.join('/')}`),
    ),
  )
  .map(([base, rest]) => base + rest)
const path = mostly(
  chatPath,
  fc.oneof(
    fc.constantFrom('/rest/push', '/rest/push?x=%', '/rest/push/', '/', '/rest', '/rest/'),
    fc.array(segment, { maxLength: 8 }).map((segments) => `/${segments.join('/')}`),
    fc.array(segment, { maxLength: 8 }).map((segments) => `//${segments.join('/')}`),
  ),
)
const method = mostly(
  fc.constantFrom('GET', 'POST', 'DELETE'),
  fc.constantFrom('PUT', 'PATCH', 'OPTIONS', 'HEAD', 'FOO'),
)
const userName = mostly(
  fc.constantFrom('alice', 'bob', 'carol'),
  fc.constantFrom('mallory', '', '__proto__', 'hasOwnProperty', 'ALICE'),
)
const cookie = fc.oneof(
  userName.map((name) => `preview-chat-user=${name}`),
  headerText.map((value) => `preview-chat-user=${value}`),
  fc.tuple(headerText, userName).map(([junk, name]) => `${junk}; preview-chat-user=${name}`),
  headerText,
)
const authorization = mostly(
  userName.map((name) => `Bearer ${name}`),
  fc.oneof(
    headerText.map((value) => `Bearer ${value}`),
    headerText,
  ),
)
const message = mostly(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('/suspend', '/fail', '/long 3', '/delegate 300', '   ', ''),
)
const chatBody = fc
  .record(
    {
      message,
      sessionId: id,
      newSession: mostly<true | 'yes' | null>(fc.constant(true), fc.constantFrom('yes', null)),
    },
    { requiredKeys: ['message'] },
  )
  .map((value) => JSON.stringify(value))
const resumeBody = fc
  .record({ runId: id, toolCallId: id, resumeData: fc.jsonValue() }, { requiredKeys: [] })
  .map((value) => JSON.stringify(value))
const jsonBody = fc.oneof(chatBody, resumeBody, fc.json({ maxDepth: 4 }))
const body = fc.oneof(
  { arbitrary: jsonBody, weight: 8 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 200 }), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      '{"message": ',
      '{"__proto__": {"polluted": true}, "message": "hi", "newSession": true}',
      '{"constructor": {"prototype": {"polluted": true}}, "message": "hi"}',
      `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
    ),
    weight: 1,
  },
  // Bodies the handler may answer without reading, up to past the 1 MiB limit.
  { arbitrary: fc.constantFrom(300, 1100).map((kb) => 'x'.repeat(kb * 1024)), weight: 1 },
)
interface FuzzRequest {
  method: string
  path: string
  body?: string | undefined
}
/** Mostly a request shaped like one of the routes (its method and path, a body like its own). */
const request: fc.Arbitrary<FuzzRequest> = mostly(
  chatBase.chain((base) =>
    fc.oneof(
      mostly(chatBody, body).map((value) => ({ method: 'POST', path: base, body: value })),
      mostly(resumeBody, body).map((value) => ({
        method: 'POST',
        path: `${base}/resume`,
        body: value,
      })),
      id.map((thread) => ({ method: 'GET', path: `${base}/${thread}/messages` })),
      fc.tuple(id, id).map(([thread, execution]) => ({
        method: 'DELETE',
        path: `${base}/${thread}/executions/${execution}`,
      })),
      id.map((run) => ({ method: 'DELETE', path: `${base}/runs/${run}` })),
    ),
  ),
  fc.record({ method, path, body: fc.option(body, { nil: undefined }) }),
)
const contentType = fc.constantFrom('application/json', 'text/plain', 'application/json; x=%')
const accept = fc.oneof(fc.constantFrom('text/event-stream', 'application/json'), headerText)

/** Headers, each present or not (Authorization mostly). */
const headers = fc
  .record({
    Authorization: fc.option(authorization, { freq: 5 }),
    Cookie: fc.option(cookie, { freq: 2 }),
    Accept: fc.option(accept, { freq: 2 }),
    'Content-Type': fc.option(mostly(contentType, headerText), { freq: 2 }),
    'X-Anything': fc.option(headerText, { freq: 2 }),
  })
  .map((record) =>
    Object.fromEntries(
      Object.entries(record).filter((entry): entry is [string, string] => entry[1] !== null),
    ),
  )

// --- what every answer must be ---------------------------------------------------------------------

const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi

/** An HTTP answer; a 4xx or 5xx carries the contract's JSON error body. */
function expectWellFormed(requestMethod: string, answer: Answer): void {
  expect(answer.status).toBeGreaterThanOrEqual(100)
  expect(answer.status).toBeLessThan(600)
  expect(answer.status).not.toBe(499) // the client did not leave
  if (answer.status >= 400 && requestMethod !== 'HEAD') errorBodyOf(answer)
}

/** The next request on the same connection is answered (unless the answer closed it). */
async function expectConnectionUsable(
  server: PreviewChatServer,
  agent: ReturnType<typeof oneConnection>,
  previous: Answer,
): Promise<void> {
  const next = await send(server, { path: '/rest/none', agent })
  expect(next.status).toBe(404)
  if (previous.headers.connection !== 'close') expect(next.reusedSocket).toBe(true)
}

/** n8n's errors: its JSON bodies (`{ code | status, message }`) or Express's HTML page. */
function expectN8nWellFormed(requestMethod: string, answer: Answer): void {
  expect(answer.status).toBeGreaterThanOrEqual(100)
  expect(answer.status).toBeLessThan(600)
  expect(answer.status).not.toBe(499)
  if (answer.status < 400 || requestMethod === 'HEAD') return
  if (answer.headers['content-type']?.startsWith('text/html')) {
    expect(answer.body).toMatch(/^<!DOCTYPE html>\n[\s\S]*<pre>[\s\S]*<\/pre>/)
  } else {
    const error = JSON.parse(answer.body) as { message?: unknown }
    expect(typeof error.message).toBe('string')
  }
}

/** One request on its own connection: its answer passes `wellFormed`, the connection stays usable. */
async function expectAnswered(
  server: PreviewChatServer,
  { method: verb, path: target, body: bytes }: FuzzRequest,
  head: Record<string, string>,
  wellFormed: (requestMethod: string, answer: Answer) => void,
): Promise<void> {
  const agent = oneConnection()
  try {
    const answer = await send(server, {
      method: verb,
      path: target,
      // Node's client sends a GET's body without a length (as a next request): say it.
      headers: {
        ...head,
        ...(bytes !== undefined && { 'Content-Length': String(Buffer.byteLength(bytes)) }),
      },
      body: bytes,
      agent,
      // A push stream (GET with Accept: text/event-stream) never ends; turn streams do.
      untilFirstChunk: verb === 'GET',
    })
    wellFormed(verb, answer)
    const pushStream = answer.headers['content-type']?.startsWith('text/event-stream')
    if (!(verb === 'GET' && pushStream)) await expectConnectionUsable(server, agent, answer)
  } finally {
    agent.destroy()
  }
}

// Raw answers follow each other directly: a sized body ends without a line break.
const statusLine = /HTTP\/1\.1 (\d{3}) [A-Z]/g

/** The statuses of the answers in a raw exchange, and the body of the last one. */
function rawAnswers(answer: string): { statuses: number[]; lastBody: string } {
  const lines = [...answer.matchAll(statusLine)]
  const last = answer.slice(lines.at(-1)?.index ?? 0)
  // The JSON of the last answer, whether sized (the host's own) or chunked (the backend's).
  const lastBody = last.slice(last.indexOf('\r\n\r\n') + 4).match(/\{.*\}/s)?.[0] ?? ''
  return { statuses: lines.map((line) => Number(line[1])), lastBody }
}

describe('fuzz: the host answers every request and stays up [R-SERVER-NEVER-CRASHES]', () => {
  it('REST: arbitrary methods, paths, headers, cookies and bodies', async () => {
    const server = await startHost()
    await assertProperty(
      fc.asyncProperty(request, headers, (fuzzed, head) =>
        expectAnswered(server, fuzzed, head, expectWellFormed),
      ),
      runs(300),
    )
    expect((await send(server, { path: '/rest/none' })).status).toBe(404)
  })

  it('SSE push: arbitrary users, cookies and Accept headers', async () => {
    const server = await startHost()
    await assertProperty(
      fc.asyncProperty(headers, async (requestHeaders) => {
        const answer = await send(server, {
          path: '/rest/push',
          headers: requestHeaders,
          untilFirstChunk: true,
        })
        expectWellFormed('GET', answer)
        if (answer.status === 200) expect(answer.body).toBe(':ok\n\n')
      }),
      runs(150),
    )
    expect((await send(server, { path: '/rest/none' })).status).toBe(404)
  })

  it('WebSocket upgrade: arbitrary methods, paths, users, handshake headers and origins', async () => {
    const corsOrigin = 'http://localhost:5173'
    const server = await startHost({ cors: corsOrigin })
    const handshake = fc.record({
      Upgrade: mostly(fc.constant('websocket'), headerText),
      'Sec-WebSocket-Key': mostly(fc.constant(upgradeHeaders['Sec-WebSocket-Key']), headerText),
      'Sec-WebSocket-Version': mostly(
        fc.constantFrom('13', '8'),
        fc.oneof(fc.constant('12'), headerText),
      ),
    })
    // The page's origin: none, the server's own (its Host), the cors one, others, anything.
    const allowed = [server.url, corsOrigin]
    const origin = fc.option(
      fc.oneof(
        fc.constantFrom(...allowed, 'null', 'http://evil.example', `${server.url}/`, '*'),
        headerText,
      ),
      { freq: 2 },
    )
    await assertProperty(
      fc.asyncProperty(
        mostly(fc.constant('GET'), fc.constantFrom('POST', 'PUT', 'HEAD')),
        mostly(fc.constant('/rest/push'), path),
        headers,
        handshake,
        origin,
        async (requestMethod, requestPath, requestHeaders, handshakeHeaders, pageOrigin) => {
          const answer = await send(server, {
            method: requestMethod,
            path: requestPath,
            headers: {
              ...requestHeaders,
              ...handshakeHeaders,
              Connection: 'Upgrade',
              ...(pageOrigin !== null && { Origin: pageOrigin }),
            },
            untilFirstChunk: true,
          })
          expectWellFormed(requestMethod, answer)
          // HTTP drops the spaces and tabs around a header value.
          const sent = pageOrigin?.replace(/^[ \t]+|[ \t]+$/g, '')
          if (sent !== undefined && !allowed.includes(sent)) expect(answer.status).not.toBe(101)
        },
      ),
      runs(100),
    )
    expect((await send(server, { path: '/rest/none' })).status).toBe(404)
  })

  it('the n8n-2.41 flavor: arbitrary requests with its cookie, browser-id and pushRef [R-N8N-EMULATION]', async () => {
    const server = await startHost({ flavor: 'n8n-2.41' })
    const n8nHeaders = fc
      .record({
        Cookie: fc.option(
          fc.oneof(
            userName.map((name) => `n8n-auth=${name}`),
            headerText.map((value) => `n8n-auth=${value}`),
            cookie,
          ),
          { freq: 5 },
        ),
        'browser-id': fc.option(mostly(fc.constant('b1'), headerText), { freq: 5 }),
        'Content-Type': fc.option(contentType, { freq: 2 }),
      })
      .map((record) =>
        Object.fromEntries(
          Object.entries(record).filter((entry): entry is [string, string] => entry[1] !== null),
        ),
      )
    const target = fc.oneof(
      { arbitrary: request, weight: 4 },
      {
        arbitrary: fc
          .option(fc.oneof(headerText, fc.constant('')), { nil: undefined })
          .map((ref): FuzzRequest => ({
            method: 'GET',
            path:
              ref === undefined ? '/rest/push' : `/rest/push?pushRef=${encodeURIComponent(ref)}`,
          })),
        weight: 1,
      },
    )
    await assertProperty(
      fc.asyncProperty(target, n8nHeaders, (fuzzed, head) =>
        expectAnswered(server, fuzzed, head, expectN8nWellFormed),
      ),
      runs(200),
    )
  })

  it('raw bytes: a request head cut short is a JSON 400, any answer is HTTP, the connection closes [R-SERVER-HOST-REFUSALS]', async () => {
    const server = await startHost()
    const requestLine = fc
      .tuple(
        fc.oneof(fc.constantFrom('GET', 'POST', 'CONNECT', 'PRI', 'get', ''), headerText),
        fc.oneof(path, headerText, fc.constantFrom('*', 'http://[::1', 'http://x/rest/none')),
        fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9', ''),
      )
      .map((parts) => parts.join(' '))
    const headerLine = fc.oneof(
      fc
        .tuple(
          fc.constantFrom('Content-Length', 'Transfer-Encoding', 'Host', 'Cookie', 'Expect'),
          headerText,
        )
        .map(([name, value]) => `${name}: ${value}`),
      headerText,
      fc.constant(' folded'),
    )
    const request = fc
      .tuple(
        requestLine,
        fc.array(headerLine, { maxLength: 5 }),
        fc.string({ unit: 'binary-ascii', maxLength: 80 }),
      )
      .map(
        ([line, lines, rest]) => `${line}\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n${rest}`,
      )
    const cutShort = request.chain((whole) =>
      fc.nat({ max: whole.length }).map((length) => whole.slice(0, length)),
    )
    await assertProperty(
      fc.asyncProperty(
        fc.oneof(request, cutShort, fc.string({ unit: 'binary-ascii', maxLength: 120 })),
        async (bytes) => {
          const { answer, closed } = await rawExchange(server, bytes)
          expect(closed).toBe(true)
          if (answer !== '') expect(answer.startsWith('HTTP/1.1 ')).toBe(true)
          // Without a whole head there is no body to wait for: the parser's refusal is answered.
          if (!bytes.includes('\r\n\r\n') && /[^\r\n]/.test(bytes)) {
            const { statuses, lastBody } = rawAnswers(answer)
            expect(statuses.at(-1)).toBeGreaterThanOrEqual(400)
            errorBodyOf({ headers: { 'content-type': 'application/json' }, body: lastBody })
          }
        },
      ),
      runs(150),
    )
    expect((await send(server, { path: '/rest/none' })).status).toBe(404)
  })
})

describe("fuzz: another user's thread answers exactly like no thread [R-SERVER-PRIVATE]", () => {
  it('for every route, user and body', async () => {
    const server = await startHost()
    /** A fresh suspended thread of alice's: its thread, execution, run and tool call ids. */
    const seedAlice = async () => {
      const sessionId = crypto.randomUUID()
      const reader = await turn(chat(server, { message: '/suspend', sessionId, newSession: true }))
      const { executionId } = await reader.until('execution-started')
      const { payload } = await reader.until('tool-call-suspended')
      await reader.rest()
      return {
        threadId: sessionId,
        executionId,
        runId: payload.runId,
        toolCallId: payload.toolCallId,
      }
    }
    type Ids = Awaited<ReturnType<typeof seedAlice>>
    const base = '/rest/projects/p1/agents/v2/a1/chat'
    const asks: Record<string, (ids: Ids, text: string, newSession: boolean) => SendBody> = {
      post: (ids, text, newSession) => ({
        method: 'POST',
        path: base,
        body: JSON.stringify({
          message: text,
          sessionId: ids.threadId,
          ...(newSession && { newSession }),
        }),
      }),
      read: (ids) => ({ method: 'GET', path: `${base}/${ids.threadId}/messages` }),
      stop: (ids) => ({
        method: 'DELETE',
        path: `${base}/${ids.threadId}/executions/${ids.executionId}`,
      }),
      resume: (ids) => ({
        method: 'POST',
        path: `${base}/resume`,
        body: JSON.stringify({ runId: ids.runId, toolCallId: ids.toolCallId, resumeData: {} }),
      }),
      cancelRun: (ids) => ({ method: 'DELETE', path: `${base}/runs/${ids.runId}` }),
    }
    type SendBody = { method: string; path: string; body?: string }
    /** The answer, with ids and times written the same whoever they belong to. */
    const normalized = (answer: Answer) => ({
      status: answer.status,
      type: answer.headers['content-type'],
      body: answer.body.replace(uuid, 'UUID').replace(/"(startTime|endTime)":\d+/g, '"$1":0'),
    })

    await assertProperty(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(asks)),
        fc.constantFrom('bob', 'carol', 'mallory', null),
        fc.constantFrom('hello', '/fail', '/long 2'),
        fc.boolean(),
        async (ask, user, text, newSession) => {
          const alices = await seedAlice()
          const nobodys: Ids = {
            threadId: crypto.randomUUID(),
            executionId: crypto.randomUUID(),
            runId: `run-${crypto.randomUUID()}`,
            toolCallId: `call-${crypto.randomUUID()}`,
          }
          const headers = {
            'Content-Type': 'application/json',
            ...(user !== null && { Authorization: `Bearer ${user}` }),
          }
          const request = asks[ask]!
          const onAlices = await send(server, { ...request(alices, text, newSession), headers })
          const onNobodys = await send(server, { ...request(nobodys, text, newSession), headers })
          expect(normalized(onAlices)).toEqual(normalized(onNobodys))
        },
      ),
      runs(60),
    )
  })
})

describe('what the parser refuses, or a target that is not a path [R-SERVER-HOST-REFUSALS]', () => {
  it.each([
    { name: 'an unknown method', bytes: 'FOO / HTTP/1.1\r\nHost: x\r\n\r\n', statuses: [400] },
    {
      name: 'a header line without a colon',
      bytes: 'GET / HTTP/1.1\r\nBad\r\n\r\n',
      statuses: [400],
    },
    { name: 'CONNECT', bytes: 'CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: x\r\n\r\n', statuses: [405] },
    { name: 'the target *', bytes: 'GET * HTTP/1.1\r\nHost: x\r\n\r\n', statuses: [400] },
    {
      name: 'a broken absolute URL',
      bytes: 'GET http://[::1 HTTP/1.1\r\nHost: x\r\n\r\n',
      statuses: [400],
    },
    {
      name: 'garbage after a request',
      bytes: 'GET /rest/none HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n',
      statuses: [404, 400],
    },
    {
      name: '70 KB of headers',
      bytes: `GET /rest/none HTTP/1.1\r\nX: ${'a'.repeat(70_000)}\r\n\r\n`,
      statuses: [431],
    },
  ])('answers $name with $statuses and a JSON error', async ({ bytes, statuses }) => {
    const server = await startHost()
    const { answer, closed } = await rawExchange(server, bytes)
    expect(closed).toBe(true)
    const answers = rawAnswers(answer)
    expect(answers.statuses).toEqual(statuses)
    errorBodyOf({ headers: { 'content-type': 'application/json' }, body: answers.lastBody })
  })
})
