/** The development users of the reference server (see packages/server/README.md). */
export const users = ['alice', 'bob', 'carol'] as const

const cookieName = 'preview-chat-user'

/** The server knows the browser's user by this cookie (the push WebSocket sends it too). */
export function readUserCookie(): string | null {
  const match = document.cookie.match(/(?:^|;\s*)preview-chat-user=([^;]*)/)
  if (!match?.[1]) return null
  try {
    return decodeURIComponent(match[1])
  } catch {
    return null // not percent-encoding (`%E0%A4%A`, set by hand): no user, which is alice
  }
}

export function writeUserCookie(user: string): void {
  document.cookie = `${cookieName}=${encodeURIComponent(user)}; path=/; SameSite=Lax`
}

/**
 * How this page proves who it is: the cookie (the default: the push WebSocket sends it too), or
 * with `?auth=bearer` an `Authorization` header on every request, as an app with tokens does (the
 * push channel is then SSE over fetch, which carries it; no cookie is written).
 */
export const authMode: 'cookie' | 'bearer' =
  typeof location !== 'undefined' && new URLSearchParams(location.search).get('auth') === 'bearer'
    ? 'bearer'
    : 'cookie'

/**
 * `?server=n8n-2.41`: talk to a server of the released n8n 2.41 protocol (the reference server's
 * `--flavor n8n-2.41`): its `n8n-auth` cookie and `browser-id` header, and a `pushRef` per tab.
 */
export const n8nMode =
  typeof location !== 'undefined' &&
  new URLSearchParams(location.search).get('server') === 'n8n-2.41'

/** The browser id n8n's login pairs with its cookie (one per browser, kept in localStorage). */
export function browserId(): string {
  const stored = localStorage.getItem('preview-chat:browser-id')
  if (stored) return stored
  const id = crypto.randomUUID()
  localStorage.setItem('preview-chat:browser-id', id)
  return id
}

/** The emulated n8n knows the user by its `n8n-auth` cookie (a real n8n sets it at login). */
export function writeN8nCookie(user: string): void {
  document.cookie = `n8n-auth=${encodeURIComponent(user)}; path=/; SameSite=Lax`
}
