import { parseChatRequest, parseResumeRequest, type ParseResult } from '@preview-chat/core/contract'
import { errorResponse, RestError } from '../http'
import { sseHeaders } from '../sse'
import { checkPathId, isQueueRoute } from '../routes/match'
import { snapshotOf } from '../store/snapshot'
import { authenticate, userCookieName, type PreviewChatUser } from '../users'
import type { Flavor } from './types'

/** The preview-chat contract (`shared/spec/`), as the reference server has always served it. */
export function specFlavor(
  users: Readonly<Record<string, PreviewChatUser>>,
  basePath: string,
): Flavor {
  return {
    name: 'spec',
    // The queue routes are the next-era flavor's.
    serves: (route) => !isQueueRoute(route),
    authenticate: (headers) => authenticate(headers, users),
    namesUser: (headers) =>
      headers.has('authorization') ||
      (headers.get('cookie') ?? '')
        .split(';')
        .some((pair) => pair.trim().startsWith(`${userCookieName}=`)),
    credentials: (userId) => ({ authorization: `Bearer ${userId}` }),
    errorResponse: (error) => errorResponse(error),
    noRoute: (method, pathname, allow) =>
      allow === undefined
        ? errorResponse(
            new RestError(
              'route_not_found',
              `No route ${method} ${pathname}.`,
              `The API lives under ${basePath}/projects/:projectId/agents/v2/:agentId/chat.`,
            ),
          )
        : errorResponse(
            new RestError('method_not_allowed', `${pathname} answers ${allow}, not ${method}.`),
            { Allow: allow },
          ),
    undecodableParam: ({ name, segment }) =>
      errorResponse(
        new RestError(
          'bad_request',
          `The ${name} "${segment}" does not decode to text (its percent-escapes are not UTF-8), so it names no id; ids travel as one URL path segment.`,
          'Percent-encode the id with encodeURIComponent; an id must be well-formed text, with no lone surrogate.',
        ),
      ),
    threadNotFound: (threadId) =>
      new RestError(
        'not_found',
        `No conversation "${threadId}" for this user and agent.`,
        'Start a new conversation with newSession: true.',
      ),
    // The contract's parsers refuse a thread id (or a run's) that a URL collapses, as the client
    // does, rather than record it under an id no read can name.
    parseChat: (body) => valid(parseChatRequest(body), body, 'sessionId'),
    parseResume: (body) => valid(parseResumeRequest(body), body, 'runId'),
    // "A message naming an unknown thread without newSession is refused in-band".
    createsThread: (body) => body.sessionId === undefined || body.newSession === true,
    refusesConcurrentTurns: true,
    // A thread is made whole before its POST is answered: a second first message finds it.
    creationRace: () => undefined,
    // "The reference server dedupes as the platform's source does" (issue 29).
    capabilities: ['message-dedupe'],
    guardsCrossSite: true,
    newExecutionId: () => crypto.randomUUID(),
    turn: { announcesStart: true, cancelsOnClose: false, endAnnouncements: 1 },
    runNotFound: (runId, action, toolCallId) =>
      errorResponse(
        new RestError(
          'not_found',
          action === 'resume'
            ? `No suspended tool call "${toolCallId}" in run "${runId}".`
            : `No suspended run "${runId}".`,
        ),
      ),
    history: (thread) => snapshotOf(thread),
    pushUser: (headers) => authenticate(headers, users),
    pushStreamRefusal: (request) =>
      (request.headers.get('accept') ?? '').includes('text/event-stream')
        ? undefined
        : errorResponse(
            new RestError(
              'bad_request',
              'The push channel is a WebSocket, or SSE when asked with Accept: text/event-stream.',
            ),
          ),
    pushStreamHeaders: sseHeaders,
    admitPushSocket: (_url, user, originAllowed) => {
      if (!originAllowed) return { kind: 'refuse', error: originNotAllowed() }
      // As the SSE push: 401 without a user, 403 without agent:read.
      if (user.kind === 'refused') return { kind: 'refuse', error: user.error }
      return { kind: 'accept', userId: user.user.id }
    },
  }
}

/**
 * A request body the contract's parser accepted; its 400 otherwise, which names the problem of the
 * body's path id (`idField`) in the one rule's words when that is what the parser refused.
 */
function valid<T>(parsed: ParseResult<T>, body: unknown, idField: string): T {
  if (parsed.success) return parsed.value
  const id: unknown =
    typeof body === 'object' && body !== null ? Reflect.get(body, idField) : undefined
  if (typeof id === 'string') checkPathId(idField, id)
  throw new RestError('bad_request', parsed.error.message)
}

/** A push WebSocket from a page of another site, which the browser sent with the user's cookie. */
function originNotAllowed(): RestError {
  return new RestError(
    'origin_not_allowed',
    "The push WebSocket does not accept pages of another origin than this server's.",
    "Serve the page from this server's origin (or through a proxy that forwards its Host; a name other than a loopback one or the bound address needs --allowed-host <name>, the allowedHosts option), or start the server with --cors <the page's origin> (the cors option). '*' does not do: it allows no cookies, and a browser's WebSocket always sends them.",
  )
}
