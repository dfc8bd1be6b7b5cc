import type { Timers } from '@preview-chat/core'
import type { PreviewChatBus, ServerPushListener } from './bus/types'
import type { RunningExecution, StartExecution } from './execution/types'
import type { Flavor } from './flavor/types'
import type { PreviewChatLogger } from './log'
import { readJsonBody, requireJsonType, type RestError } from './http'
import type { SseStream } from './sse'
import type { ExecutionDraft, ExecutionRecord, PreviewChatStore } from './store/types'
import { scopeRefusal, type PreviewChatUser, type Scope } from './users'

/** What the route handlers of one main share: the record, the bus, its flavor, its running turns. */
export interface BackendContext {
  readonly store: PreviewChatStore
  readonly bus: PreviewChatBus
  /** Every way the released n8n differs from the spec is the flavor's; the rest is shared. */
  readonly flavor: Flavor
  readonly mainId: string
  readonly now: () => number
  /** Set once the main shuts down: no new turn is admitted. */
  readonly closing: boolean
  readonly limits: { maxTurnMs?: number; maxRunningTurnsPerUser?: number }
  readonly log: PreviewChatLogger
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
  /**
   * Who sent `request` (`push`: for a push channel, where a flavor may read other credentials):
   * the app's `authenticate`, or the flavor's development users. Asked once per request.
   */
  identify(request: Request, channel?: 'rest' | 'push'): Promise<PreviewChatUser | undefined>
  /** The 401 of this backend (the development one names its users; the app's says nothing). */
  unauthorized(): RestError
  /** Hears a user's push messages through the bus, counted as one of this main's connections. */
  subscribe(userId: string, listener: ServerPushListener): () => void
}

/** The request's JSON body; a flavor that guards against other sites wants it typed so (415). */
export async function readBody(context: BackendContext, request: Request): Promise<unknown> {
  if (context.flavor.guardsCrossSite) requireJsonType(request)
  return readJsonBody(request)
}

/** The user the request names, with `scope`; throws the 401 or 403 otherwise. */
export async function requireUser(
  context: BackendContext,
  request: Request,
  scope: Scope,
): Promise<PreviewChatUser> {
  const user = await context.identify(request)
  if (!user) throw context.unauthorized()
  const refusal = scopeRefusal(user, scope)
  if (refusal) throw refusal
  return user
}

/** The admission's per-user limit, where `limits.maxRunningTurnsPerUser` sets one. */
export function maxRunning(context: BackendContext): { maxRunningPerOwner?: number } {
  const max = context.limits.maxRunningTurnsPerUser
  return max === undefined ? {} : { maxRunningPerOwner: max }
}
