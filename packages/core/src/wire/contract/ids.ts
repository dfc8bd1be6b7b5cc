/**
 * The ids the contract builds from other ids: one implementation, used by the client's live view,
 * its reads and the reference server's recorder.
 */

/** Identifies a thread. */
export interface ThreadKey {
  projectId: string
  agentId: string
  threadId: string
}

/** Whether `other` names the thread `key` (a push names its thread: push reaches every project member). */
export const isThread = (key: ThreadKey, other: ThreadKey): boolean =>
  other.threadId === key.threadId &&
  other.agentId === key.agentId &&
  other.projectId === key.projectId

/** The role of a recorded message; one execution is one turn of one user and one assistant message. */
export type RecordedRole = 'user' | 'assistant'

/** The id the record gives a turn's message: `${executionId}:user` or `${executionId}:assistant`. */
export const recordedMessageId = (executionId: string, role: RecordedRole): string =>
  `${executionId}:${role}`

/**
 * Why `id` cannot be a project, agent or thread id, or `null` when it can. Ids travel
 * percent-encoded as one URL path segment (`/threads/:threadId/messages`), so an id must come back
 * unchanged from `encodeURIComponent` and `decodeURIComponent`: a lone UTF-16 surrogate (text cut
 * inside an emoji, `"chat-\ud83d"`) has no UTF-8 bytes, so `encodeURIComponent` throws and no URL
 * can name it. And a URL parser collapses the segments `.` and `..` (which percent-encoding leaves
 * as they are), so those would address another route. Any other non-empty string works.
 */
export function pathSegmentIdProblem(id: unknown): string | null {
  if (typeof id !== 'string' || id === '') return 'is empty'
  if (id === '.' || id === '..') return `"${id}" is a relative path segment, which a URL collapses`
  if (!survivesPercentEncoding(id)) {
    return 'holds a lone UTF-16 surrogate (as text cut inside an emoji does), which no URL can carry'
  }
  return null
}

/** Whether a percent-encoding round trip gives `id` back (it throws on a lone surrogate). */
function survivesPercentEncoding(id: string): boolean {
  try {
    return decodeURIComponent(encodeURIComponent(id)) === id
  } catch {
    return false
  }
}

/**
 * What a record keyed by ids from outside (tool call ids, execution ids, queue ids, tab ids) keeps
 * under `id`: its own property only, so an id such as `constructor`, `toString` or `__proto__` is
 * an id like any other and never finds what every object inherits. Every such lookup goes through
 * here (or a `Map`); the records stay plain JSON, as traces and storage keep them.
 */
export const byId = <T>(
  record: Readonly<Record<string, T>> | undefined,
  id: string,
): T | undefined => (record !== undefined && Object.hasOwn(record, id) ? record[id] : undefined)

/** `record` with `value` under `id`, a copy: an own property even for `__proto__`. */
export function withId<T>(
  record: Readonly<Record<string, T>> | undefined,
  id: string,
  value: T,
): Record<string, T> {
  const out = { ...record }
  Object.defineProperty(out, id, { value, enumerable: true, writable: true, configurable: true })
  return out
}
