import type { Timers } from '@preview-chat/core'
import {
  capabilitiesHeader,
  formatCapabilities,
  type ServerCapability,
} from '@preview-chat/core/contract'
import { scriptedAgent, type PreviewChatAgent } from './agent'
import type { BackendContext } from './context'
import {
  checkCorsOrigin,
  corsHeaders,
  originMaySendCookies,
  pageSchemeOf,
  type OwnOrigin,
} from './cors'
import { startExecution } from './execution/start'
import type { ExecutionSettings, RunningExecution } from './execution/types'
import { createFlavor, type FlavorName, type PushBackend, type PushSocketAdmission } from './flavor'
import { checkAllowedHosts, hostnameOf } from './hosts'
import { createInspectionLog, type PreviewChatInspection } from './inspection'
import { createMemoryBus } from './bus/memory'
import { guardedBus, startMainLease, type DeploymentErrorListener } from './deployment'
import type { PreviewChatBus } from './bus/types'
import type { PushListener, ServerPushListener } from './push'
import { admitPushUser } from './push-admission'
import { afterExecution } from './queue/model'
import { letSteersIn } from './queue/steer'
import { dispatch } from './routes/dispatch'
import { platformTimers, sleepOn, type Sleep } from './sleep'
import { createMemoryStore } from './store/memory'
import type { PreviewChatStore } from './store/types'
import { keyOfThread } from './threads'
import { shuttingDown } from './admission'
import { PreviewChatConfigError } from './config-error'
import { ReadyAnswer } from './http'
import { loggedError, type PreviewChatLogger } from './log'
import {
  builtInUsers,
  notAuthenticated,
  unauthorized,
  userOfIdentity,
  type PreviewChatAuthenticate,
  type PreviewChatUser,
} from './users'

export type { PreviewChatInspection, RecordingLogEntry, RequestLogEntry } from './inspection'

export interface PreviewChatBackendOptions {
  /**
   * Who is calling: the app's auth (a session cookie, a JWT, …) as `{ userId, scopes }`, or null
   * (401, no detail). Decides every route, push (SSE and WebSocket) included. Without it the
   * backend needs `dev: true`.
   */
  authenticate?: PreviewChatAuthenticate
  /**
   * A development server: without `authenticate`, the built-in development users (alice, bob,
   * carol, or `users`) by `Authorization: Bearer <name>` or the cookie `preview-chat-user=<name>`
   * (the flavors keep their own credentials: n8n-2.41's cookie and `browser-id`), and the scripted
   * demo agent when no `agent` is given. What the CLI, the demo and the msw kit pass. Never deploy it.
   */
  dev?: boolean
  /** Pause between streamed deltas, in ms (40 by default: a demo turn lasts a few seconds). */
  deltaMs?: number
  /** How often a running turn's snapshot is recorded and announced, in ms (250 by default). */
  snapshotMs?: number
  /** The shared budget of a delegation's child text and reasoning (4,000 by default). */
  delegationCharLimit?: number
  /**
   * The record every main of a deployment shares: threads, executions, suspended runs, queues
   * (`createMemoryStore()` by default). Pass one store and one `bus` to several backends to
   * simulate several mains in one process (what the tests and the CLI's `--mains` do).
   */
  store?: PreviewChatStore
  /**
   * How the mains of a deployment reach each other: push fan-out and the Stop relay
   * (`createMemoryBus()` by default, which reaches the mains of this process only).
   */
  bus?: PreviewChatBus
  /** This main's id (a fresh one by default). Unique in the deployment, stable for its life. */
  mainId?: string
  /**
   * The period of this main's lease on the turns it runs and of its sweep for the turns of mains
   * whose lease lapsed (killed, cut off), which end as `error` (`instance_lost`) with what they
   * recorded kept, their threads told on the bus; a lease lasts three periods. 10,000 ms by default
   * when a `store` is given (a store shared by several processes needs it in every one of them);
   * `false`, or no `store`, runs none (one process holds every turn it runs).
   */
  leaseMs?: number | false
  /** What a user's turns may take; no limit by default. */
  limits?: PreviewChatLimits
  /**
   * The structured log: JSON-able entries with a level, an event and the execution, thread and
   * user ids where known (nothing by default; the CLI writes JSON lines to the console).
   */
  logger?: PreviewChatLogger
  /** Replaces the built-in development users (alice, bob, carol). */
  users?: Readonly<Record<string, PreviewChatUser>>
  /** Every pause of the agent goes through it, so tests can pace a turn step by step. */
  sleep?: Sleep
  /**
   * The timers of the snapshot batches, the SSE pings and the default `sleep` (the platform's by
   * default), so a test can drive the server's clock too.
   */
  timers?: Timers
  /** The REST base (`/rest` by default). */
  basePath?: string
  /** The app's agent (the scripted demo agent by default, with `dev: true` only). */
  agent?: PreviewChatAgent
  /**
   * How many entries `inspect.requests` and `inspect.recordings` keep: the latest 1,000 by
   * default, so that a long-running server does not grow with them. `countRequests` counts all.
   */
  logLimit?: number
  /**
   * Lets pages of another origin call this server: one origin (`http://localhost:5173`, whose
   * pages may send cookies too) or `*` (any origin, no credentials). Preflights are answered and
   * every answer carries the Access-Control headers. Off by default.
   */
  cors?: string
  /**
   * Host names (or addresses) this server answers to besides loopback ones (`localhost`,
   * `127.0.0.0/8`, `[::1]`) and the address it is bound to: the push WebSocket refuses a page
   * whose name is none of them (against DNS rebinding), as Vite's `server.allowedHosts`. A leading
   * dot (`.example`) allows the name and its subdomains. Empty by default.
   */
  allowedHosts?: readonly string[]
  /** Idle time before an SSE `:ping` comment (30 s by default). */
  pingMs?: number
  now?: () => number
  /**
   * Which server to behave as: `'spec'` (the default), the preview-chat contract, or
   * `'n8n-2.41'`, the released n8n 2.41's preview chat as `fixtures/n8n-2.41/` captured it (no
   * `execution-started`, closing the stream cancels the turn, no Stop route, no
   * `activeExecutionId`, concurrent turns, cookie + `browser-id` auth, its error bodies). See the
   * README's "Emulating the released n8n 2.41". `'next-era'`: the spec plus the platform's
   * unreleased server-side queue (`shared/interop/next-era.md`; the README's "The next-era flavor").
   */
  flavor?: FlavorName
  /**
   * The n8n-2.41 flavor's push transport (n8n's `N8N_PUSH_BACKEND`): `'sse'` (the default) or
   * `'websocket'`, whatever the client asks. The spec flavor serves both and refuses this option.
   */
  pushBackend?: PushBackend
}

/** What a user's turns may take. */
export interface PreviewChatLimits {
  /** A turn running longer ends as `error` with errorCode `turn_too_long` (and a reason). */
  maxTurnMs?: number
  /**
   * How many turns one user may run at once, on every main: one more is refused with 429
   * `too_many_turns` and `Retry-After`.
   */
  maxRunningTurnsPerUser?: number
}

export interface PreviewChatBackend {
  /**
   * The whole contract as a Fetch handler; never rejects. `ownHosts`: the names the request
   * reached this server by (the Node host passes its bound name and the connection's address),
   * besides the request URL's, loopback ones and `allowedHosts`, for the Origin check of a POST or
   * DELETE authenticated by cookie (as `admitPushSocket`'s).
   */
  fetch(request: Request, info?: { ownHosts?: readonly string[] }): Promise<Response>
  /** Receives the push messages of `userId` (what each of that user's tabs receives). */
  subscribePush(userId: string, listener: PushListener): () => void
  /**
   * Receives every push message of `userId`: `subscribePush`'s, and the next-era flavor's
   * `agentMessageQueueUpdated` (what a push channel forwards).
   */
  subscribeAllPush(userId: string, listener: ServerPushListener): () => void
  /**
   * The development user a request's headers name: `Authorization: Bearer <user>` or the cookie
   * `preview-chat-user=<user>` (spec); the cookie `n8n-auth=<user>` with a `browser-id` header
   * (n8n-2.41). The development users' only (see `dev`); a backend with `authenticate` asks that.
   */
  authenticate(headers: Headers): PreviewChatUser | undefined
  /** Which server this backend behaves as. */
  readonly flavor: FlavorName
  /** Headers that authenticate as `userId` in this flavor (for mocks that act as a user). */
  credentials(userId: string): Record<string, string>
  /** Whether the headers carry this flavor's credentials at all, known or not. */
  namesUser(headers: Headers): boolean
  /**
   * Whether a WebSocket upgrade to the push channel (`url`, with `headers`) is accepted, and as
   * whom; the Node host and the MSW mock ask before (or instead of) the handshake. A page of
   * another origin than this server's or `cors`'s is refused: a browser sends the cookie with the
   * upgrade from any page, and CORS does not cover WebSockets. This server's origin is the `Host`
   * the upgrade names, with `url`'s scheme, under one of the server's names: loopback ones,
   * `allowedHosts`, and `ownHosts` (what the host is bound to, e.g. the connection's address).
   */
  admitPushSocket(
    url: URL,
    headers: Headers,
    ownHosts?: readonly string[],
  ): Promise<PushSocketAdmission>
  readonly mainId: string
  readonly store: PreviewChatStore
  readonly bus: PreviewChatBus
  readonly basePath: string
  /** The `cors` option, checked; undefined when off. */
  readonly cors: string | undefined
  readonly inspect: PreviewChatInspection
  /**
   * Ends this main: its running turns stop at their next pause and are recorded as `interrupted`,
   * its push streams close. For tests; a process that stops calls `shutdown`.
   */
  close(): Promise<void>
  /**
   * Shuts this main down gracefully: no new turn from now on (503 `shutting_down` with
   * `Retry-After`), the running ones get `graceMs` (10,000 by default) to end, then end as `error`
   * (`server_shutdown`, with a reason), never left `running`; then its push streams close.
   */
  shutdown(options?: { graceMs?: number }): Promise<void>
}

/**
 * Creates one main of the reference backend: the preview-chat contract, in memory. This is the
 * wiring; each route family, the thread store, the admission of turns and the execution runner
 * live in files of their own.
 */
export function createPreviewChatBackend(
  options: PreviewChatBackendOptions = {},
): PreviewChatBackend {
  checkOptions(options)
  const store = options.store ?? createMemoryStore()
  const bus = options.bus ?? createMemoryBus()
  // What fails in the background of a deployment's main (a push the bus could not publish, a
  // lease the store could not renew) goes to the log; nothing waits for it.
  const report: DeploymentErrorListener = (event, error) =>
    options.logger?.({ level: 'warn', event, mainId, error: loggedError(error) })
  const users = options.users ?? builtInUsers
  const basePath = (options.basePath ?? '/rest').replace(/\/+$/, '')
  const mainId = options.mainId ?? `main-${crypto.randomUUID().slice(0, 8)}`
  const flavor = createFlavor({
    flavor: options.flavor,
    pushBackend: options.pushBackend,
    users,
    basePath,
  })
  const cors = options.cors === undefined ? undefined : checkCorsOrigin(options.cors)
  const allowedHosts = checkAllowedHosts(options.allowedHosts ?? [])
  const leaseMs = options.leaseMs ?? (options.store ? 10_000 : false)
  if (leaseMs !== false && !(Number.isInteger(leaseMs) && leaseMs > 0)) {
    throw new RangeError(
      'createPreviewChatBackend: `leaseMs` must be a positive whole number of ms or false.',
    )
  }
  const sharedBus = guardedBus(bus, report)
  const lease =
    leaseMs === false
      ? undefined
      : startMainLease({ store, bus: sharedBus, mainId, periodMs: leaseMs, report })
  const context = createContext(options, { store, bus: sharedBus, mainId, flavor }, lease?.ready)
  const log = createInspectionLog(
    store,
    context.running,
    (userId) => context.connections.get(userId) ?? 0,
    options.logLimit ?? 1000,
  )
  context.onRecorded = (executionId, status) => log.recorded({ executionId, status })
  const unregisterRelay = bus.register(mainId, context.cancelLocal)
  const allowOrigin = corsHeaders(cors)

  return {
    async fetch(request, info) {
      const { response, route } = await dispatch(
        context,
        request,
        basePath,
        cors,
        ownOrigin(request, info, allowedHosts),
      )
      log.request({
        method: request.method,
        path: new URL(request.url).pathname,
        route,
        userId: (await context.identify(request))?.id,
        status: response.status,
      })
      for (const [header, value] of Object.entries(allowOrigin)) response.headers.set(header, value)
      announceCapabilities(response, flavor.capabilities, cors)
      return response
    },
    subscribePush: (userId, listener) =>
      context.subscribe(userId, (message) => {
        if (message.type === 'agentExecutionUpdated') listener(message)
      }),
    subscribeAllPush: (userId, listener) => context.subscribe(userId, listener),
    authenticate: (headers) => flavor.authenticate(headers),
    flavor: flavor.name,
    credentials: (userId) => flavor.credentials(userId),
    namesUser: (headers) => flavor.namesUser(headers),
    admitPushSocket: async (url, headers, ownHosts = []) => {
      const originAllowed = originMaySendCookies(headers, cors, ownOf(url, ownHosts, allowedHosts))
      const user = await context.identify(upgradeRequest(url, headers), 'push')
      return flavor.admitPushSocket(url, admitPushUser(user, context.unauthorized), originAllowed)
    },
    mainId,
    store,
    bus,
    basePath,
    cors,
    inspect: log.inspection,
    async shutdown({ graceMs = 10_000 } = {}) {
      context.closing = true
      context.log({ level: 'info', event: 'shutdown', mainId })
      const finishing = Promise.all([...context.running.values()].map((each) => each.finished))
      let timer: unknown
      const graceOver = new Promise<void>((resolve) => {
        timer = context.timers.setTimeout(resolve, graceMs)
      })
      await Promise.race([finishing, graceOver])
      context.timers.clearTimeout(timer)
      for (const execution of context.running.values()) {
        if (!execution.controller.signal.aborted) execution.controller.abort('shutdown')
      }
      await finishing
      // Its turns ended and recorded: the lease goes (the sweep of the others stops here too).
      await lease?.stop()
      unregisterRelay()
      for (const end of [...context.pushStreams]) end()
    },
    async close() {
      context.closing = true
      unregisterRelay()
      const finishing = [...context.running.values()].map((execution) => {
        execution.controller.abort('close')
        return execution.finished
      })
      for (const end of [...context.pushStreams]) end()
      await Promise.all(finishing)
      await lease?.stop()
    },
  }
}

/** Refuses options that cannot run: no auth outside development, no agent outside development. */
function checkOptions(options: PreviewChatBackendOptions): void {
  if (options.dev === true) return
  if (options.authenticate === undefined) {
    throw new PreviewChatConfigError(
      'no_authenticate',
      'createPreviewChatBackend needs `authenticate` (who is calling: your auth), or `dev: true` for the built-in development users.',
    )
  }
  if (options.agent === undefined) {
    throw new PreviewChatConfigError(
      'no_agent',
      'createPreviewChatBackend needs `agent` (your agent); the scripted demo agent is for `dev: true` only.',
    )
  }
}

/** A WebSocket upgrade as the Fetch `Request` an `authenticate` reads (its URL as http or https). */
function upgradeRequest(url: URL, headers: Headers): Request {
  const http = new URL(url)
  http.protocol = url.protocol === 'wss:' || url.protocol === 'https:' ? 'https:' : 'http:'
  return new Request(http, { headers })
}

/** Who sent each request: the app's `authenticate` (asked once per request), or the flavor's users. */
function createIdentify(
  options: PreviewChatBackendOptions,
  flavor: BackendContext['flavor'],
  log: PreviewChatLogger,
  mainId: string,
): BackendContext['identify'] {
  const { authenticate } = options
  if (!authenticate) {
    return (request, channel = 'rest') =>
      Promise.resolve(
        channel === 'push'
          ? flavor.pushUser(request.headers)
          : flavor.authenticate(request.headers),
      )
  }
  const asked = new WeakMap<Request, Promise<PreviewChatUser | undefined>>()
  return (request) => {
    let user = asked.get(request)
    if (!user) {
      // Whatever it answers or throws is parsed: anything but an identity is no user (401).
      user = Promise.resolve()
        .then(() => authenticate(request))
        .then(userOfIdentity, (error: unknown) => {
          log({ level: 'error', event: 'authenticate_failed', mainId, error: loggedError(error) })
          return undefined
        })
      asked.set(request, user)
    }
    return user
  }
}

/** The context of one main, with what only the wiring can set afterwards. */
interface MainContext extends BackendContext {
  closing: boolean
  /** How many push subscriptions each user holds on this main. */
  readonly connections: Map<string, number>
  onRecorded: ExecutionSettings['onRecorded']
}

/** One main's context: its running turns and the handles of the admission, start and Stop. */
function createContext(
  options: PreviewChatBackendOptions,
  shared: Pick<BackendContext, 'store' | 'bus' | 'mainId' | 'flavor'>,
  leaseReady: Promise<void> = Promise.resolve(),
): MainContext {
  const { flavor } = shared
  const timers = options.timers ?? platformTimers
  const now = options.now ?? Date.now
  const running = new Map<string, RunningExecution>()
  // Admitted on this main, not started yet; a Stop for one of them is kept for its start.
  const starting = new Set<string>()
  const pendingStops = new Set<string>()
  const connections = new Map<string, number>()
  const log = options.logger ?? (() => {})
  const context: MainContext = {
    ...shared,
    now,
    pingMs: options.pingMs ?? 30_000,
    timers,
    running,
    pushStreams: new Set(),
    queueStreams: new Map(),
    connections,
    closing: false,
    limits: options.limits ?? {},
    log,
    identify: createIdentify(options, flavor, log, shared.mainId),
    unauthorized: options.authenticate ? notAuthenticated : unauthorized,
    onRecorded: () => {},
    async admit(kind, admit) {
      if (context.closing) throw new ReadyAnswer(shuttingDown())
      // A turn is admitted under this main's lease, never before its first renewal: another main
      // sweeping meanwhile would end it as lost.
      await leaseReady
      const draft = {
        id: flavor.newExecutionId(),
        mainId: shared.mainId,
        kind,
        startedAt: new Date(now()).toISOString(),
      }
      starting.add(draft.id)
      try {
        const result = await admit(draft)
        if (!result?.ok) starting.delete(draft.id)
        return result
      } catch (error) {
        starting.delete(draft.id)
        throw error
      }
    },
    begin(start) {
      const { id } = start.execution
      starting.delete(id)
      const execution = startExecution(
        settings,
        start,
        (handle) => running.set(handle.id, handle),
        (handleId) => running.delete(handleId),
      )
      if (pendingStops.delete(id)) execution.controller.abort('stop')
      return execution
    },
    // The bus calls it for Stops that reached another main. Accepted while the execution has
    // not ended ("false when that execution is not running any more"), even when already asked;
    // one admitted here but not started yet is stopped as it starts.
    cancelLocal: (executionId) => {
      const execution = running.get(executionId)
      if (!execution) {
        if (!starting.has(executionId)) return false
        pendingStops.add(executionId)
        return true
      }
      // Asked already: it ends cancelled. Its outcome known otherwise: too late for this one.
      if (execution.controller.signal.aborted) return true
      if (execution.ending) return false
      execution.controller.abort('stop')
      return true
    },
    subscribe(userId, listener) {
      connections.set(userId, (connections.get(userId) ?? 0) + 1)
      const unsubscribe = shared.bus.subscribe(userId, listener)
      let subscribed = true
      return () => {
        if (!subscribed) return
        subscribed = false
        unsubscribe()
        const left = (connections.get(userId) ?? 1) - 1
        if (left === 0) connections.delete(userId)
        else connections.set(userId, left)
      }
    },
  }
  const settings = executionSettings(options, context)
  return context
}

/** What the execution runner of one main is given. */
function executionSettings(
  options: PreviewChatBackendOptions,
  context: MainContext,
): ExecutionSettings {
  const { flavor } = context
  return {
    store: context.store,
    bus: context.bus,
    mainId: context.mainId,
    agent: options.agent ?? scriptedAgent,
    sleep: options.sleep ?? sleepOn(context.timers),
    deltaMs: options.deltaMs ?? 40,
    snapshotMs: options.snapshotMs ?? 250,
    delegationCharLimit: options.delegationCharLimit ?? 4000,
    pingMs: context.pingMs,
    now: context.now,
    timers: context.timers,
    newId: () => crypto.randomUUID(),
    rules: flavor.turn,
    onRecorded: (executionId, status) => context.onRecorded(executionId, status),
    log: context.log,
    ...(context.limits.maxTurnMs !== undefined && { maxTurnMs: context.limits.maxTurnMs }),
    onFailure: (event, execution, error) =>
      context.log({
        level: 'error',
        event,
        mainId: context.mainId,
        executionId: execution.id,
        threadId: execution.threadId,
        userId: execution.ownerId,
        error: loggedError(error),
      }),
    ...(flavor.capabilities.includes('message-queue') && {
      onEnded: (thread, execution) => afterExecution(context, keyOfThread(thread), execution),
      onPause: (thread, executionId, inputs) =>
        letSteersIn(context, keyOfThread(thread), executionId, inputs),
    }),
  }
}

/**
 * What the server offers, on every answer (a read's too): a client learns it from whatever it asks
 * first, not only from a POST of its own (a second device that only reads). A page of another
 * origin may read it (`cors` on).
 */
function announceCapabilities(
  response: Response,
  capabilities: readonly ServerCapability[],
  cors: string | undefined,
): void {
  if (capabilities.length > 0 && !response.headers.has(capabilitiesHeader))
    response.headers.set(capabilitiesHeader, formatCapabilities(capabilities))
  if (cors === undefined || !response.headers.has(capabilitiesHeader)) return
  const exposed = response.headers.get('Access-Control-Expose-Headers')
  response.headers.set(
    'Access-Control-Expose-Headers',
    exposed ? `${exposed}, ${capabilitiesHeader}` : capabilitiesHeader,
  )
}

/** Who this server is for the Origin checks: the scheme and names a request reached it by. */
function ownOf(url: URL, ownHosts: readonly string[], allowedHosts: readonly string[]): OwnOrigin {
  return {
    scheme: pageSchemeOf(url),
    hosts: [...allowedHosts, ...ownHosts.flatMap((name) => hostnameOf(name) ?? [])],
  }
}

/**
 * The same for a REST request. A host that calls `fetch(request, somethingElse)` (e.g. Bun's
 * server) passes no names. The request URL's own name counts: the Node host builds it from the
 * address it is bound to; a host that builds it from `Host` (Bun, Deno) lets that name in, so the
 * check there guards against pages of other sites, not against DNS rebinding (which carries no
 * cookie of this name).
 */
function ownOrigin(
  request: Request,
  info: { ownHosts?: readonly string[] } | undefined,
  allowedHosts: readonly string[],
): OwnOrigin {
  const url = new URL(request.url)
  const ownHosts = Array.isArray(info?.ownHosts) ? info.ownHosts : []
  return ownOf(url, [url.hostname, ...ownHosts], allowedHosts)
}
