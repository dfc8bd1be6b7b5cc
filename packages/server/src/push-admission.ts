import type { RestError } from './http'
import { scopeRefusal, unauthorized, type PreviewChatUser } from './users'

/**
 * Who may have a push channel, whatever its transport: a known user with `agent:read` (the scope
 * of reading history, which is all a push message leads to). The one check of every push channel
 * of every flavor: the SSE route and `admitPushSocket` both ask it, and a flavor's WebSocket
 * admission gets only its answer, so no channel can admit a user it refused (issue 27, row j: the
 * n8n-2.41 flavor's WebSocket once let a user without the scope in).
 */
export type PushUserAdmission =
  | { kind: 'admitted'; user: PreviewChatUser }
  /** 401 for no known user, 403 `forbidden` without the scope; a flavor says it its own way. */
  | { kind: 'refused'; error: RestError }

/** The admission of `user` (whom the flavor's credentials name, if anyone) to a push channel. */
export function admitPushUser(
  user: PreviewChatUser | undefined,
  refused: () => RestError = unauthorized,
): PushUserAdmission {
  if (!user) return { kind: 'refused', error: refused() }
  const refusal = scopeRefusal(user, 'agent:read')
  return refusal ? { kind: 'refused', error: refusal } : { kind: 'admitted', user }
}
