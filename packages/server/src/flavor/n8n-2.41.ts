import type {
  ChatRequestBody,
  Message,
  MessagePart,
  ResumeRequestBody,
} from '@preview-chat/core/contract'
import { dataResponse, jsonResponse, ReadyAnswer, RestError, textResponse } from '../http'
import { isQueueRoute } from '../routes/match'
import { sseAnswer } from '../sse'
import { snapshotOf } from '../store/snapshot'
import { cookieValue, userNamed, type PreviewChatUser } from '../users'
import type { Flavor, PushBackend } from './types'

/**
 * The released n8n 2.41's preview chat, as `fixtures/n8n-2.41/` captured it (and a live 2.41.1
 * answered): what its README's table lists, in the shapes n8n sends. What it cannot know (a
 * real login, projects with several members) is said where it is decided.
 */

/** n8n's session cookie; the emulation accepts a user name as its value (`n8n-auth=alice`). */
export const n8nAuthCookie = 'n8n-auth'

/** The `browser-id` this backend's own credentials send (n8n wants the one used at login). */
const emulatedBrowserId = 'preview-chat-emulation'

/** Where the stack traces of the emulated errors point (n8n sends real ones outside production). */
const emulatedStack = '    at the preview-chat reference server (n8n 2.41 emulation)'

// Express's `res.json`, and its JSON 4xx/5xx.
const n8nJsonHeaders = { 'Content-Type': 'application/json; charset=utf-8' }
const n8nJson = (body: unknown, status: number, headers: Record<string, string> = {}) =>
  jsonResponse(body, status, { ...n8nJsonHeaders, ...headers })

/** `{ code: <status>, message, stacktrace }`: n8n's `ResponseError` outside production. */
function responseError(status: number, message: string): Response {
  return n8nJson(
    { code: status, message, stacktrace: `ResponseError: ${message}\n${emulatedStack}` },
    status,
  )
}

/** Express's `finalhandler` page: a route nobody serves, or an error thrown outside a controller. */
export function expressErrorPage(status: number, text: string): Response {
  const pre = escapeHtml(text)
    .replace(/\n/g, '<br>')
    .replace(/\x20{2}/g, ' &nbsp;')
  return textResponse(
    `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>${pre}</pre>\n</body>\n</html>\n`,
    status,
    {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': "default-src 'none'",
      'X-Content-Type-Options': 'nosniff',
    },
  )
}

function escapeHtml(text: string): string {
  const entities: Record<string, string> = {
    '&': '&amp;',
    '<': '&lt;',
    '>': '&gt;',
    '"': '&quot;',
    "'": '&#39;',
  }
  return text.replace(/[&<>"']/g, (char) => entities[char] ?? char)
}

/** A 500 page for an error thrown in a middleware (n8n's push route). */
const thrownPage = (message: string) =>
  expressErrorPage(500, `ResponseError: ${message}\n${emulatedStack}`)

const idAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** A 16-character id of letters and digits, like n8n's execution ids (`mAaZcGyePtNFWPef`). */
export function n8nId(): string {
  let id = ''
  while (id.length < 16) {
    for (const byte of crypto.getRandomValues(new Uint8Array(16))) {
      // 248 = 4 × 62: a byte above it would favour the first letters.
      if (byte < 248 && id.length < 16) id += idAlphabet[byte % idAlphabet.length]
    }
  }
  return id
}

// Validation answers: the first zod issue, as n8n's DTO validation sends it (captured live).
type Issue = Record<string, unknown>

const refuse = (issue: Issue): never => {
  throw new ReadyAnswer(n8nJson(issue, 400))
}

function zodType(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number' && Number.isNaN(value)) return 'nan'
  return typeof value
}

function typeIssue(path: string[], expected: string, value: unknown): Issue {
  const received = zodType(value)
  return {
    code: 'invalid_type',
    expected,
    received,
    path,
    message: value === undefined ? 'Required' : `Expected ${expected}, received ${received}`,
  }
}

function objectBody(body: unknown): Record<string, unknown> {
  if (zodType(body) !== 'object') refuse(typeIssue([], 'object', body))
  return body as Record<string, unknown>
}

function requiredString(record: Record<string, unknown>, key: string): string {
  const value = record[key]
  if (typeof value !== 'string') refuse(typeIssue([key], 'string', value))
  return value as string
}

/**
 * `POST …/chat`: `{ message, sessionId?, attachments? }`, every other field removed (so a
 * `newSession` is ignored). Attachments are not emulated: a blank message is refused even with some.
 */
function parseChat(body: unknown): ChatRequestBody {
  const record = objectBody(body)
  const message = requiredString(record, 'message')
  const { sessionId } = record
  if (sessionId !== undefined) {
    if (typeof sessionId !== 'string') refuse(typeIssue(['sessionId'], 'string', sessionId))
    if ((sessionId as string).length === 0) {
      refuse({
        code: 'too_small',
        minimum: 1,
        type: 'string',
        inclusive: true,
        exact: false,
        message: 'String must contain at least 1 character(s)',
        path: ['sessionId'],
      })
    }
  }
  if (message.trim() === '') {
    refuse({
      code: 'custom',
      message: 'Message text or at least one attachment is required',
      path: ['message'],
    })
  }
  return { message, ...(sessionId !== undefined && { sessionId: sessionId as string }) }
}

function parseResume(body: unknown): ResumeRequestBody {
  const record = objectBody(body)
  const runId = requiredString(record, 'runId')
  const toolCallId = requiredString(record, 'toolCallId')
  return { runId, toolCallId, resumeData: record.resumeData }
}

/** Whether a part shows something: n8n writes the assistant message with its first output. */
const shows = (part: MessagePart) =>
  (part.type !== 'text' && part.type !== 'reasoning') || part.text !== ''

/**
 * A thread as n8n 2.41 reads it: `{ messages, openSuspensions }`, no `activeExecutionId`; user
 * messages without `executionStatus`; a running execution's assistant message only once it shows
 * output; no thread at all (a 404) before its first recorded snapshot.
 */
function history(thread: Parameters<Flavor['history']>[0]): unknown {
  const { messages, openSuspensions } = snapshotOf(thread)
  if (messages.length === 0) return undefined
  const visible = messages.flatMap((message): Omit<Message, 'executionStatus'>[] => {
    if (message.role === 'user') {
      const { executionStatus: _status, executionError: _error, ...user } = message
      return [user]
    }
    if (message.executionStatus === 'running' && !message.content.some(shows)) return []
    return [message]
  })
  return { messages: visible, openSuspensions }
}

export function n8n241Flavor(
  users: Readonly<Record<string, PreviewChatUser>>,
  pushBackend: PushBackend,
): Flavor {
  const cookieUser = (headers: Headers) => userNamed(cookieValue(headers, n8nAuthCookie), users)

  return {
    name: 'n8n-2.41',
    // "no `DELETE …/chat/:threadId/executions/:executionId` route".
    serves: (route) => route !== 'stop' && !isQueueRoute(route),
    // The cookie and a `browser-id` header (any value here; n8n wants the login's). No bearer.
    authenticate: (headers) =>
      (headers.get('browser-id') ?? '').trim() === '' ? undefined : cookieUser(headers),
    namesUser: (headers) => cookieValue(headers, n8nAuthCookie) !== undefined,
    credentials: (userId) => ({
      cookie: `${n8nAuthCookie}=${encodeURIComponent(userId)}`,
      'browser-id': emulatedBrowserId,
    }),
    errorResponse: (error, request) => {
      switch (error.code) {
        case 'unauthorized':
          // n8n also clears the cookie it did not accept.
          return n8nJson(
            { status: 'error', message: 'Unauthorized' },
            401,
            cookieValue(request.headers, n8nAuthCookie) === undefined
              ? {}
              : {
                  'Set-Cookie': `${n8nAuthCookie}=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT`,
                },
          )
        case 'forbidden':
          return n8nJson(
            { status: 'error', message: 'User is missing a scope required to perform this action' },
            403,
          )
        case 'bad_request':
          // Validation answers its issues itself (`ReadyAnswer`): what remains is a body that
          // is not JSON, which n8n's body parser throws outside any controller.
          return thrownPage('Failed to parse request body')
        default:
          return responseError(error.status, error.message)
      }
    },
    noRoute: (method, pathname) => expressErrorPage(404, `Cannot ${method} ${pathname}`),
    // Express decodes a route's params as it matches the route, before any handler: its 400 page
    // (`decode_param`; not captured from n8n, which has no such route param in its fixtures).
    undecodableParam: ({ segment }) =>
      expressErrorPage(400, `URIError: Failed to decode param '${segment}'\n${emulatedStack}`),
    threadNotFound: (threadId) => new RestError('not_found', `Thread "${threadId}" not found`),
    parseChat,
    parseResume,
    // "If it names no thread yet, a new thread is made with that id."
    createsThread: () => true,
    // "competing POST in one thread: accepted".
    refusesConcurrentTurns: false,
    // "two first POSTs at once to a new thread: one turn, and on the other stream `:ok` then an
    // in-band error" (checked live on 2.41.1): before its first record a thread is not in n8n's
    // database (a read answers 404), so a second first message inserts it again and fails.
    creationRace: (thread) =>
      thread.activeExecutionId !== null && history(thread) === undefined
        ? sseAnswer({
            type: 'error',
            message: 'SQLITE_CONSTRAINT: UNIQUE constraint failed: agents_threads.id',
          })
        : undefined,
    // Released 2.41 has no message ids and no queue: its parser drops a `messageId`.
    capabilities: [],
    guardsCrossSite: false,
    newExecutionId: n8nId,
    turn: { announcesStart: false, cancelsOnClose: true, endAnnouncements: 2 },
    runNotFound: (runId, action) =>
      action === 'resume'
        ? sseAnswer({
            type: 'error',
            message: `Checkpoint ${runId} not found and cannot be resumed`,
          })
        : dataResponse({ cancelled: false }),
    history,
    // n8n skips the browser-id check on its push route: a browser cannot send it there.
    pushUser: cookieUser,
    pushStreamRefusal: (request) => {
      const pushRef = new URL(request.url).searchParams.get('pushRef')
      if (pushRef === null) return thrownPage('Request is not a PushRequest')
      if (pushRef === '') return thrownPage('The query parameter "pushRef" is missing!')
      // With N8N_PUSH_BACKEND=websocket, a request that is no WebSocket.
      if (pushBackend === 'websocket') {
        return textResponse('Unauthorized', 401, { 'Content-Type': 'text/html; charset=utf-8' })
      }
      return undefined
    },
    pushStreamHeaders: {
      'Content-Type': 'text/event-stream; charset=UTF-8',
      'Cache-Control': 'no-cache',
      Incremental: '?1',
      'X-Accel-Buffering': 'no',
    },
    admitPushSocket: (url, user, originAllowed) => {
      // With N8N_PUSH_BACKEND=sse n8n has no upgrade handler and never answers; here the socket
      // is dropped at once instead of left hanging.
      if (pushBackend === 'sse') return { kind: 'drop' }
      // n8n completes the handshake, then its refusal (401 or 403 JSON, or the 500 of a request
      // that is not a PushRequest) closes the socket without a status: any answer over 200 does.
      const pushRef = url.searchParams.get('pushRef')
      if (user.kind === 'refused' || pushRef === null) return { kind: 'close' }
      if (pushRef === '') {
        return { kind: 'close', code: 1008, message: 'The query parameter "pushRef" is missing!' }
      }
      // As n8n in production (after its auth and pushRef checks), for a page of another origin.
      if (!originAllowed) return { kind: 'close', code: 1008, message: 'Invalid origin!' }
      return { kind: 'accept', userId: user.user.id }
    },
  }
}
