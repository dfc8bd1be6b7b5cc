import type { Timers } from '@preview-chat/core'
import type { RunningExecution, StartExecution } from './execution/types'
import type { Flavor } from './flavor/types'
import { readJsonBody, requireJsonType } from './http'
import type { ExecutionRelay } from './relay'
import type { SseStream } from './sse'
import type { PreviewChatStore } from './store'
import { withScope, type PreviewChatUser, type Scope } from './users'

/** What the route handlers of one main share: its state, its flavor, its running turns. */
export interface BackendContext {
  readonly store: PreviewChatStore
  /** Every way the released n8n differs from the spec is the flavor's; the rest is shared. */
  readonly flavor: Flavor
  readonly mainId: string
  readonly relay: ExecutionRelay
  readonly now: () => number
  readonly pingMs: number
  readonly timers: Timers
  /** The executions this main runs now, by id. */
  readonly running: Map<string, RunningExecution>
  /** Ends one open SSE push stream of this main (each removes itself once ended). */
  readonly pushStreams: Set<() => void>
  /** Starts a turn on this main; returns its live stream. */
  begin(start: StartExecution): SseStream
  /** The local half of Stop: aborts an execution this main runs; whether that was accepted. */
  cancelLocal(executionId: string): boolean
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
