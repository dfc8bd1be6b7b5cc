/**
 * The shape of a flavor, apart from the flavors themselves (`spec.ts`, `n8n-2.41.ts`) and the
 * choice between them (`index.ts`): each flavor imports only this, so none depends on another.
 */
import type {
  ChatRequestBody,
  ResumeRequestBody,
  ServerCapability,
} from '@preview-chat/core/contract'
import type { RestError } from '../http'
import type { PushUserAdmission } from '../push-admission'
import type { RawParam, RouteName } from '../routes/match'
import type { ThreadRecord } from '../store/types'
import type { PreviewChatUser } from '../users'

/**
 * Which server the backend behaves as: `'spec'`, the preview-chat contract (the default);
 * `'n8n-2.41'`, the released n8n 2.41's preview chat as captured in `fixtures/n8n-2.41/`; or
 * `'next-era'`, the spec plus the platform's unreleased queue (`shared/interop/next-era.md`).
 */
export type FlavorName = 'spec' | 'n8n-2.41' | 'next-era'

/** How the n8n flavor serves its push channel (n8n's `N8N_PUSH_BACKEND`): one or the other. */
export type PushBackend = 'sse' | 'websocket'

/** What the execution runner asks of a flavor. */
export interface TurnRules {
  /**
   * Record the execution and write `execution-started` before the agent's first event (the spec).
   * Otherwise the stream starts with the agent's events and the first snapshot is recorded at the
   * first `snapshotMs` tick (n8n 2.41).
   */
  announcesStart: boolean
  /**
   * A client closing the turn's stream cancels the turn, recorded `cancelled` with what was
   * streamed (n8n 2.41). Otherwise the turn runs on (the spec).
   */
  cancelsOnClose: boolean
  /** How many push notifications announce the end (n8n 2.41 sends two). */
  endAnnouncements: number
}

/** Whether, and as whom, a WebSocket push connection is accepted. */
export type PushSocketAdmission =
  | { kind: 'accept'; userId: string }
  /** Refuse the handshake with this HTTP error. */
  | { kind: 'refuse'; error: RestError }
  /**
   * Complete the handshake, then close at once: with `code` after sending `message` as a text
   * frame, or without a status (the client sees 1005).
   */
  | { kind: 'close'; code?: number; message?: string }
  /** Never answer the handshake (no WebSocket is served here): the socket is dropped. */
  | { kind: 'drop' }

/**
 * The decisions the backend asks of its flavor: the places where the released n8n 2.41 differs
 * from the spec. Everything else (the agent, the recorder and its one fold, the store, ownership)
 * is the same code for every flavor.
 */
export interface Flavor {
  readonly name: FlavorName
  /** Whether this flavor has the route at all (n8n 2.41 has no Stop route). */
  serves(route: RouteName): boolean
  /** The known user the headers name, by this flavor's credentials. */
  authenticate(headers: Headers): PreviewChatUser | undefined
  /** Whether the headers carry this flavor's credentials at all, known or not. */
  namesUser(headers: Headers): boolean
  /** Headers that authenticate as `userId`. */
  credentials(userId: string): Record<string, string>
  /** The answer to a `RestError` thrown by a route (the request, for what it carried). */
  errorResponse(error: RestError, request: Request): Response
  /** The answer to a path no route of this flavor serves, or to a method its route does not answer. */
  noRoute(method: string, pathname: string, allow?: string): Response
  /**
   * The answer to a route whose param does not decode to text (`…/chat/%ED%A0%BD/messages`):
   * a 400, as no id can be named so.
   */
  undecodableParam(param: RawParam): Response
  /** The error for a thread this user does not have. */
  threadNotFound(threadId: string): RestError
  /** Validates a chat request body; throws the flavor's 400. */
  parseChat(body: unknown): ChatRequestBody
  /** Validates a resume request body; throws the flavor's 400. */
  parseResume(body: unknown): ResumeRequestBody
  /** Whether a message naming a thread this user does not have creates it under that id. */
  createsThread(body: ChatRequestBody): boolean
  /** Whether a new message (or resume) is refused while a turn runs in the thread. */
  readonly refusesConcurrentTurns: boolean
  /**
   * The answer to a message naming a thread that another first message is still creating (made
   * in the store, nothing of it recorded yet), or undefined to take it as any message of the
   * thread. n8n 2.41 writes the thread with its turn's first record: of two first messages at
   * once, the second write fails on the thread's unique id (`SQLITE_CONSTRAINT`), in-band.
   */
  creationRace(thread: ThreadRecord): Response | undefined
  /**
   * What the flavor does beyond the contract, announced in the `Preview-Chat-Capabilities` header
   * of its turn streams (none: no header). `message-dedupe`: a chat POST whose `messageId` the
   * thread accepted already is answered with a bare `done`. `message-queue`: a message posted
   * while a turn runs is queued (`message-queued`), and the queue routes are served.
   */
  readonly capabilities: readonly ServerCapability[]
  /**
   * Whether requests a page of another site could send with the user's cookie are refused (CSRF):
   * a body not typed `application/json` (415), and a POST or DELETE authenticated by cookie from
   * a page whose origin may not send cookies (403, as the push WebSocket checks). Not n8n 2.41's:
   * its `browser-id` header already makes a browser preflight such a request, and its answers to
   * these were not captured.
   */
  readonly guardsCrossSite: boolean
  /** A fresh execution id. */
  newExecutionId(): string
  readonly turn: TurnRules
  /** The answer to `resume` or `cancel` naming a run this user does not have (or in another thread). */
  runNotFound(runId: string, action: 'resume' | 'cancel', toolCallId?: string): Response
  /** The body of a history read (inside `{ data }`), or undefined when it answers `threadNotFound`. */
  history(thread: ThreadRecord): unknown
  /** The user of a push connection (n8n checks no `browser-id` there: a browser cannot send it). */
  pushUser(headers: Headers): PreviewChatUser | undefined
  /** Refuses an authenticated SSE push request this flavor does not serve; undefined accepts it. */
  pushStreamRefusal(request: Request): Response | undefined
  /** The headers of the SSE push stream. */
  readonly pushStreamHeaders: Readonly<Record<string, string>>
  /**
   * Whether a WebSocket upgrade to the push path (`url`) is accepted; `user` is what
   * `admitPushUser` said of its user (the one check of every push channel: only an admitted user
   * can be accepted), `originAllowed` false for a page of another origin than this server's or
   * `cors`'s.
   */
  admitPushSocket(url: URL, user: PushUserAdmission, originAllowed: boolean): PushSocketAdmission
}
