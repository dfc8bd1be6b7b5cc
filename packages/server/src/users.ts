/**
 * Development-only users. The reference server has no sign-in: the caller names itself with
 * `Authorization: Bearer <user>` or the cookie `preview-chat-user=<user>`. Never deploy this.
 */

import { RestError } from './http'

export type Scope = 'agent:read' | 'agent:execute'

export interface PreviewChatUser {
  id: string
  scopes: readonly Scope[]
}

/** Who a request comes from, as the app's `authenticate` says: its user id and scopes. */
export interface PreviewChatIdentity {
  userId: string
  /** `agent:read` reads history and hears push; `agent:execute` sends, resumes and stops. */
  scopes: readonly Scope[]
}

/**
 * The app's auth: who sent `request` (a session cookie, a JWT, whatever the app has), or null
 * (the request is answered 401, with no detail). Decides every route, push included.
 */
export type PreviewChatAuthenticate = (
  request: Request,
) => PreviewChatIdentity | null | undefined | Promise<PreviewChatIdentity | null | undefined>

const knownScopes: readonly Scope[] = ['agent:read', 'agent:execute']

/** What `authenticate` answered, parsed: a user, or undefined for anything that is not one. */
export function userOfIdentity(identity: unknown): PreviewChatUser | undefined {
  if (typeof identity !== 'object' || identity === null) return undefined
  const { userId, scopes } = identity as Record<string, unknown>
  if (typeof userId !== 'string' || userId === '' || !Array.isArray(scopes)) return undefined
  return { id: userId, scopes: knownScopes.filter((scope) => scopes.includes(scope)) }
}

/** The 401 of a backend with its own `authenticate`: nothing beyond the code. */
export function notAuthenticated(): RestError {
  return new RestError('unauthorized', 'Not authenticated.')
}

/** alice and bob may read and execute; carol may only read. */
export const builtInUsers: Readonly<Record<string, PreviewChatUser>> = {
  alice: { id: 'alice', scopes: ['agent:read', 'agent:execute'] },
  bob: { id: 'bob', scopes: ['agent:read', 'agent:execute'] },
  carol: { id: 'carol', scopes: ['agent:read'] },
}

export const userCookieName = 'preview-chat-user'

/** The user name of an `Authorization: Bearer <user>` header, if the request sends one. */
function bearerName(headers: Headers): string | undefined {
  return headers.get('authorization')?.match(/^Bearer\s+(\S+)\s*$/i)?.[1] || undefined
}

/** The user name the request claims, from the bearer header first, then the cookie. */
export function claimedUserName(headers: Headers): string | undefined {
  return bearerName(headers) ?? (cookieValue(headers, userCookieName) || undefined)
}

/**
 * Whether the request would be authenticated by a cookie: one that a browser sends whatever page
 * made the request (a bearer header, a page must add itself, and CORS preflights).
 */
export function authenticatesByCookie(headers: Headers): boolean {
  return bearerName(headers) === undefined && headers.has('cookie')
}

/** The decoded value of the cookie `name`, if the request sends it (and it decodes). */
export function cookieValue(headers: Headers, name: string): string | undefined {
  const cookie = headers.get('cookie')
  if (!cookie) return undefined
  for (const pair of cookie.split(';')) {
    const [key, ...rest] = pair.trim().split('=')
    if (key === name) return decodeCookieValue(rest.join('=').trim())
  }
  return undefined
}

/** A malformed escape (`%`, `%E0%A4%A`) names nobody: a 401, never a thrown URIError. */
function decodeCookieValue(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}

/** The known user the headers name; an unknown name counts as no user (401). */
export function authenticate(
  headers: Headers,
  users: Readonly<Record<string, PreviewChatUser>>,
): PreviewChatUser | undefined {
  return userNamed(claimedUserName(headers), users)
}

/** The known user of that name; undefined for no name or an unknown one. */
export function userNamed(
  name: string | undefined,
  users: Readonly<Record<string, PreviewChatUser>>,
): PreviewChatUser | undefined {
  if (name === undefined || !Object.prototype.hasOwnProperty.call(users, name)) return undefined
  return users[name]
}

export function hasScope(user: PreviewChatUser, scope: Scope): boolean {
  return user.scopes.includes(scope)
}

/** The 403 of a user without `scope`; undefined when the user has it. */
export function scopeRefusal(user: PreviewChatUser, scope: Scope): RestError | undefined {
  if (!hasScope(user, scope)) {
    return new RestError('forbidden', `The user "${user.id}" lacks the scope ${scope}.`)
  }
  return undefined
}

/** The 401 of every route and of the WebSocket upgrade. */
export function unauthorized(): RestError {
  return new RestError(
    'unauthorized',
    'No known user. This development server knows alice, bob and carol.',
    'Send "Authorization: Bearer alice" or the cookie "preview-chat-user=alice".',
  )
}
