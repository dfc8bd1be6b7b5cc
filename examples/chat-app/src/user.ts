/** The development users of the reference server (see packages/server/README.md). */
export const users = ['alice', 'bob', 'carol'] as const

const cookieName = 'preview-chat-user'

/** The server knows the browser's user by this cookie (the push WebSocket sends it too). */
export function readUserCookie(): string | null {
  const match = document.cookie.match(/(?:^|;\s*)preview-chat-user=([^;]*)/)
  return match?.[1] ? decodeURIComponent(match[1]) : null
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
