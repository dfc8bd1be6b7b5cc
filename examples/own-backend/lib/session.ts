import type { PreviewChatAuthenticate } from '@preview-chat/server'

/**
 * This app's sign-in, as small as a real one can be: a session cookie holding the user's id and
 * an HMAC of it, made with a secret only the server knows. `authenticate` is what the chat
 * backend asks about every request (its routes and its push stream alike).
 */

/** The accounts of this example (a real app has a user table). */
export const accounts = ['ada', 'grace', 'linus'] as const

export const sessionCookie = 'session'

/** The signing secret: `SESSION_SECRET` in production; a fixed one for the example's runs. */
function secret(): string {
  return process.env.SESSION_SECRET ?? 'own-backend example: set SESSION_SECRET in production'
}

const encoder = new TextEncoder()

async function hmac(value: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(secret()),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  const signature = await crypto.subtle.sign('HMAC', key, encoder.encode(value))
  return Buffer.from(signature).toString('base64url')
}

/** The cookie value of a session for `userId`. */
export async function sessionFor(userId: string): Promise<string> {
  return `${userId}.${await hmac(userId)}`
}

/** The user a session cookie's value proves, or null (absent, forged, no such account). */
export async function userOfSession(value: string | undefined): Promise<string | null> {
  const [userId, signature, ...rest] = value?.split('.') ?? []
  if (!userId || !signature || rest.length > 0) return null
  if (!accounts.includes(userId as (typeof accounts)[number])) return null
  return signature === (await hmac(userId)) ? userId : null
}

/** The session cookie of a request's `Cookie` header. */
export function sessionOf(headers: Headers): string | undefined {
  for (const pair of headers.get('cookie')?.split(';') ?? []) {
    const [name, ...value] = pair.trim().split('=')
    if (name === sessionCookie) return value.join('=')
  }
  return undefined
}

/**
 * Who is calling the chat backend: the signed-in user, who may read and run the agent; null
 * (the backend answers 401) without a valid session.
 */
export const authenticate: PreviewChatAuthenticate = async (request) => {
  const userId = await userOfSession(sessionOf(request.headers))
  return userId === null ? null : { userId, scopes: ['agent:read', 'agent:execute'] }
}
