import type { Timers } from '@preview-chat/core'
import type { PreviewChatBus, ServerPushListener } from './bus/types'
import type { RunningExecution, StartExecution } from './execution/types'
import type { Flavor } from './flavor/types'
import { readJsonBody, requireJsonType } from './http'
import type { SseStream } from './sse'
import type { ExecutionDraft, ExecutionRecord, PreviewChatStore } from './store/types'
import { withScope, type PreviewChatUser, type Scope } from './users'

/** What the route handlers of one main share: the record, the bus, its flavor, its running turns. */
export interface BackendContext {
  readonly store: PreviewChatStore
  readonly bus: PreviewChatBus
  /** Every way the released n8n differs from the spec is the flavor's; the rest is shared. */
  readonly flavor: Flavor
  readonly mainId: string
  readonly now: () => number
  readonly pingMs: number
  readonly timers: Timers
  /** The executions this main runs now, by id. */
  readonly running: Map<string, RunningExecution>
  /** Ends one open SSE push stream of this main (each removes itself once ended). */
  readonly pushStreams: Set<() => void>
  /** The streams of the queued messages posted to this main (next-era), by queue id. */
  readonly queueStreams: Map<string, SseStream>
  /**
   * Records a new execution of this main through `admit` (one store operation given the draft):
   * a Stop that reaches this main between the record and the start is kept and applied at the
   * start (the platform's "pending Stops").
   */
  admit<R extends { ok: boolean } | undefined>(
    kind: ExecutionRecord['kind'],
    admit: (draft: ExecutionDraft) => Promise<R>,
  ): Promise<R>
  /** Starts an admitted turn on this main. */
  begin(start: StartExecution): RunningExecution
  /** The local half of Stop: aborts an execution this main runs; whether that was accepted. */
  cancelLocal(executionId: string): boolean
  /** Hears a user's push messages through the bus, counted as one of this main's connections. */
  subscribe(userId: string, listener: ServerPushListener): () => void
}

/** The request's JSON body; a flavor that guards against other sites wants it typed so (415). */
export async function readBody(context: BackendContext, request: Request): Promise<unknown> {
  if (context.flavor.guardsCrossSite) requireJsonType(request)
  return readJsonBody(request)
}

/** The user the request names, with `scope`; throws the 401 or 403 otherwise. */
export function requireUser(
  context: BackendContext,
  request: Request,
  scope: Scope,
): PreviewChatUser {
  return withScope(context.flavor.authenticate(request.headers), scope)
}
