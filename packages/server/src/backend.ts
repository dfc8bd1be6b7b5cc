import type { Timers } from '@preview-chat/core'
import type {
  HistorySnapshot,
  PushMessage,
  RunCancelAnswer,
  StopAnswer,
} from '@preview-chat/core/contract'
import { scriptedAgent, type PreviewChatAgent } from './agent'
import {
  startExecution,
  type ExecutionSettings,
  type RunningExecution,
  type StartExecution,
} from './execution'
import { checkCorsOrigin, corsHeaders, originMaySendCookies, preflightResponse } from './cors'
import { createFlavor, type FlavorName, type PushBackend, type PushSocketAdmission } from './flavor'
import { dataResponse, readJsonBody, ReadyAnswer, RestError } from './http'
import type { PushListener } from './push'
import type { ExecutionRelay } from './relay'
import { matchRoute, routeMethods, type Route, type RouteName } from './routes'
import { platformTimers, sleepOn, type Sleep } from './sleep'
import { createSseStream, sseAnswer, sseResponse } from './sse'
import {
  createPreviewChatStore,
  snapshotOf,
  threadKey,
  type ExecutionRecord,
  type PreviewChatStore,
  type ThreadRecord,
} from './store'
import { builtInUsers, hasScope, unauthorized, type PreviewChatUser, type Scope } from './users'

export interface PreviewChatBackendOptions {
  /** Pause between streamed deltas, in ms (40 by default: a demo turn lasts a few seconds). */
  deltaMs?: number
  /** How often a running turn's snapshot is recorded and announced, in ms (250 by default). */
  snapshotMs?: number
  /** The shared budget of a delegation's child text and reasoning (4,000 by default). */
  delegationCharLimit?: number
  /** The state shared by every main; pass one store to several backends to run several mains. */
  store?: PreviewChatStore
  /** This main's id (a fresh one by default). */
  mainId?: string
  /** How a Stop reaches another main; the store's in-process relay by default. */
  relay?: ExecutionRelay
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
  /** Replaces the scripted agent. */
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
  /** Idle time before an SSE `:ping` comment (30 s by default). */
  pingMs?: number
  now?: () => number
  /**
   * Which server to behave as: `'spec'` (the default), the preview-chat contract, or
   * `'n8n-2.41'`, the released n8n 2.41's preview chat as `fixtures/n8n-2.41/` captured it (no
   * `execution-started`, closing the stream cancels the turn, no Stop route, no
   * `activeExecutionId`, concurrent turns, cookie + `browser-id` auth, its error bodies). See the
   * README's "Emulating the released n8n 2.41".
   */
  flavor?: FlavorName
  /**
   * The n8n-2.41 flavor's push transport (n8n's `N8N_PUSH_BACKEND`): `'sse'` (the default) or
   * `'websocket'`, whatever the client asks. The spec flavor serves both and refuses this option.
   */
  pushBackend?: PushBackend
}

/** One handled request, for tests: e.g. "exactly one POST reached the chat route". */
export interface RequestLogEntry {
  method: string
  path: string
  route: RouteName | 'unknown'
  userId: string | undefined
  status: number
}

/** One recorded snapshot (each one was announced to the owner's tabs). */
export interface RecordingLogEntry {
  executionId: string
  status: ExecutionRecord['status']
}

/** Read-only views for tests; not part of the wire contract. */
export interface PreviewChatInspection {
  /** Every thread of the store (all mains), as copies. */
  threads(): ThreadRecord[]
  /**
   * The history snapshot of a thread, as its owner would read it. Thread ids are scoped to their
   * owner: name `ownerId` when two users may have used the same id (the first one found otherwise).
   */
  history(threadId: string, ownerId?: string): HistorySnapshot | undefined
  /** Every execution of the store (all mains), as copies. */
  executions(): ExecutionRecord[]
  /** The ids of the executions this main runs now. */
  running(): string[]
  /** Whether a running execution of this main still has a client reading its live stream. */
  hasListener(executionId: string): boolean
  /** The latest snapshots this main recorded (up to `logLimit`), in order. */
  readonly recordings: readonly RecordingLogEntry[]
  /** The latest requests this main handled (up to `logLimit`), in order. */
  readonly requests: readonly RequestLogEntry[]
  /** How many requests this main handled, all of them (not only those `requests` still holds). */
  countRequests(filter: { route?: RouteName | 'unknown'; method?: string }): number
}

export interface PreviewChatBackend {
  /** The whole contract as a Fetch handler; never rejects. */
  fetch(request: Request): Promise<Response>
  /** Receives the push messages of `userId` (what each of that user's tabs receives). */
  subscribePush(userId: string, listener: PushListener): () => void
  /**
   * The user a request's headers name: `Authorization: Bearer <user>` or the cookie
   * `preview-chat-user=<user>` (spec); the cookie `n8n-auth=<user>` with a `browser-id` header
   * (n8n-2.41).
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
   * another origin than this server's (its `Host`) or `cors`'s is refused: a browser sends the
   * cookie with the upgrade from any page, and CORS does not cover WebSockets.
   */
  admitPushSocket(url: URL, headers: Headers): PushSocketAdmission
  readonly mainId: string
  readonly store: PreviewChatStore
  readonly basePath: string
  /** The `cors` option, checked; undefined when off. */
  readonly cors: string | undefined
  readonly inspect: PreviewChatInspection
  /**
   * Ends this main: its running turns stop at their next pause and are recorded as `interrupted`,
   * its push streams close. For tests and shutdown.
   */
  close(): Promise<void>
}

/** Creates one main of the reference backend: the preview-chat contract, in memory. */
export function createPreviewChatBackend(
  options: PreviewChatBackendOptions = {},
): PreviewChatBackend {
  const store = options.store ?? createPreviewChatStore()
  const relay = options.relay ?? store.relay
  const users = options.users ?? builtInUsers
  const basePath = (options.basePath ?? '/rest').replace(/\/+$/, '')
  const mainId = options.mainId ?? `main-${crypto.randomUUID().slice(0, 8)}`
  const now = options.now ?? Date.now
  const timers = options.timers ?? platformTimers
  const pingMs = options.pingMs ?? 30_000
  // Every way the released n8n differs from the spec is the flavor's; the rest is shared.
  const flavor = createFlavor({
    flavor: options.flavor,
    pushBackend: options.pushBackend,
    users,
    basePath,
  })
  const running = new Map<string, RunningExecution>()
  const pushStreams = new Set<() => void>()
  const cors = options.cors === undefined ? undefined : checkCorsOrigin(options.cors)
  const logLimit = options.logLimit ?? 1000
  const requests: RequestLogEntry[] = []
  const recordings: RecordingLogEntry[] = []
  // Per route and method: few keys, as there are few routes and an HTTP parser knows few methods.
  const requestCounts = new Map<
    string,
    { route: RouteName | 'unknown'; method: string; count: number }
  >()

  const settings: ExecutionSettings = {
    store,
    mainId,
    agent: options.agent ?? scriptedAgent,
    sleep: options.sleep ?? sleepOn(timers),
    deltaMs: options.deltaMs ?? 40,
    snapshotMs: options.snapshotMs ?? 250,
    delegationCharLimit: options.delegationCharLimit ?? 4000,
    pingMs,
    now,
    timers,
    newId: () => crypto.randomUUID(),
    newExecutionId: flavor.newExecutionId,
    rules: flavor.turn,
    onRecorded: (executionId, status) => keepLatest(recordings, { executionId, status }, logLimit),
  }

  // The local half of Stop; the relay calls it for Stops that reached another main.
  const cancelLocal = (executionId: string): boolean => {
    const execution = running.get(executionId)
    if (!execution || execution.controller.signal.aborted) return false
    execution.controller.abort('stop')
    return true
  }
  const unregisterRelay = relay.register(mainId, cancelLocal)

  const begin = (start: StartExecution) =>
    startExecution(
      settings,
      start,
      (execution) => running.set(execution.id, execution),
      (id) => running.delete(id),
    ).stream

  const withScope = (user: PreviewChatUser | undefined, scope: Scope): PreviewChatUser => {
    if (!user) throw unauthorized()
    if (!hasScope(user, scope)) {
      throw new RestError('forbidden', `The user "${user.id}" lacks the scope ${scope}.`)
    }
    return user
  }
  const requireUser = (request: Request, scope: Scope) =>
    withScope(flavor.authenticate(request.headers), scope)

  // "Other users cannot read or cancel a private preview turn": a user only ever looks among
  // their own threads, so another user's thread is exactly as absent as one that never existed.
  const scopeOf = (route: { projectId: string; agentId: string }, user: PreviewChatUser) => ({
    ownerId: user.id,
    projectId: route.projectId,
    agentId: route.agentId,
  })

  const ownedThread = (
    threadId: string,
    route: { projectId: string; agentId: string },
    user: PreviewChatUser,
  ): ThreadRecord => {
    const thread = store.threads.get(threadKey(scopeOf(route, user), threadId))
    if (!thread) throw flavor.threadNotFound(threadId)
    return thread
  }

  const turnAlreadyRunning = () =>
    sseAnswer({
      type: 'error',
      message: 'A turn is already running in this conversation.',
      errorCode: 'turn_already_running',
    })
  // "New-message submission stays blocked while a turn runs" (where the flavor refuses them).
  const refusesTurn = (thread: ThreadRecord) =>
    flavor.refusesConcurrentTurns && thread.activeExecutionId !== null

  // "Closing before execution-started abandons the request": nothing is recorded.
  const abandoned = () => new Response(null, { status: 499 })

  const chat = async (
    request: Request,
    route: Extract<Route, { name: 'chat' }>,
  ): Promise<Response> => {
    const user = requireUser(request, 'agent:execute')
    const body = flavor.parseChat(await readJsonBody(request))
    if (request.signal.aborted) return abandoned()
    const threadId = body.sessionId ?? crypto.randomUUID()
    const key = threadKey(scopeOf(route, user), threadId)
    let thread = store.threads.get(key)
    if (thread) {
      if (refusesTurn(thread)) return turnAlreadyRunning()
    } else if (!flavor.createsThread(body)) {
      return sseAnswer({
        type: 'error',
        message: 'Session not found',
        errorCode: 'session_not_found',
      })
    } else {
      thread = {
        id: threadId,
        projectId: route.projectId,
        agentId: route.agentId,
        ownerId: user.id,
        createdAt: new Date(now()).toISOString(),
        messages: [],
        openSuspensions: [],
        activeExecutionId: null,
      }
      store.threads.set(key, thread)
    }
    const stream = begin({
      thread,
      kind: 'message',
      input: { kind: 'message', message: body.message },
      userText: body.message,
      signal: request.signal,
    })
    return sseResponse(stream)
  }

  const resume = async (
    request: Request,
    route: Extract<Route, { name: 'resume' }>,
  ): Promise<Response> => {
    const user = requireUser(request, 'agent:execute')
    const body = flavor.parseResume(await readJsonBody(request))
    const run = store.runs.get(body.runId)
    if (!run || run.ownerId !== user.id || run.payload.toolCallId !== body.toolCallId) {
      return flavor.runNotFound(body.runId, 'resume', body.toolCallId)
    }
    const thread = ownedThread(run.threadId, route, user)
    if (run.state !== 'open') {
      throw new RestError(
        'conflict',
        `The run "${run.runId}" was already ${run.state}.`,
        'Read the conversation again to see its current state.',
      )
    }
    if (refusesTurn(thread)) return turnAlreadyRunning()
    if (request.signal.aborted) return abandoned()
    run.state = 'resumed'
    closeSuspension(thread, run.runId)
    const stream = begin({
      thread,
      kind: 'resume',
      input: { kind: 'resume', payload: run.payload, resumeData: body.resumeData },
      resumes: run.payload,
      signal: request.signal,
    })
    return sseResponse(stream)
  }

  const messages = (request: Request, route: Extract<Route, { name: 'messages' }>): Response => {
    const user = requireUser(request, 'agent:read')
    const body = flavor.history(ownedThread(route.threadId, route, user))
    if (body === undefined) throw flavor.threadNotFound(route.threadId)
    return dataResponse(body)
  }

  const stop = async (
    request: Request,
    route: Extract<Route, { name: 'stop' }>,
  ): Promise<Response> => {
    const user = requireUser(request, 'agent:execute')
    const thread = ownedThread(route.threadId, route, user)
    const execution = store.executions.get(route.executionId)
    // The execution's own thread, not merely one with the same id (another user may have one).
    if (!execution || threadKey(execution, execution.threadId) !== threadKey(thread, thread.id)) {
      throw new RestError('not_found', `No execution "${route.executionId}" in this conversation.`)
    }
    // "A late request cannot cancel a later execution": only the named execution is considered.
    let cancelRequested = false
    if (execution.status === 'running') {
      cancelRequested =
        execution.mainId === mainId
          ? cancelLocal(execution.id)
          : await relay.cancel(execution.mainId, execution.id)
    }
    const answer: StopAnswer = { cancelRequested }
    return dataResponse(answer)
  }

  // "Suspended turns use the existing checkpoint cancellation path."
  const cancelRun = (request: Request, route: Extract<Route, { name: 'cancelRun' }>): Response => {
    const user = requireUser(request, 'agent:execute')
    const run = store.runs.get(route.runId)
    if (!run || run.ownerId !== user.id) return flavor.runNotFound(route.runId, 'cancel')
    const thread = ownedThread(run.threadId, route, user)
    let cancelled = false
    if (run.state === 'open') {
      run.state = 'cancelled'
      closeSuspension(thread, run.runId, 'The suspended run was cancelled.')
      store.push.publish(thread.ownerId, {
        type: 'agentExecutionUpdated',
        data: {
          projectId: thread.projectId,
          agentId: thread.agentId,
          threadId: thread.id,
          executionId: run.executionId,
        },
      })
      cancelled = true
    }
    const answer: RunCancelAnswer = { cancelled }
    return dataResponse(answer)
  }

  // The push channel as SSE (the Node host also serves it as a WebSocket).
  const push = (request: Request): Response => {
    const user = withScope(flavor.pushUser(request.headers), 'agent:read')
    const refusal = flavor.pushStreamRefusal(request)
    if (refusal) return refusal
    let unsubscribe = () => {}
    const end = () => {
      unsubscribe()
      pushStreams.delete(end)
      stream.close()
    }
    const stream = createSseStream({ pingMs, timers, onCancel: end })
    unsubscribe = store.push.subscribe(user.id, (message: PushMessage) => stream.send(message))
    pushStreams.add(end)
    request.signal.addEventListener('abort', end, { once: true })
    return sseResponse(stream, flavor.pushStreamHeaders)
  }

  const route = async (request: Request, matched: Route): Promise<Response> => {
    switch (matched.name) {
      case 'chat':
        return chat(request, matched)
      case 'resume':
        return resume(request, matched)
      case 'messages':
        return messages(request, matched)
      case 'stop':
        return stop(request, matched)
      case 'cancelRun':
        return cancelRun(request, matched)
      case 'push':
        return push(request)
    }
  }

  const handle = async (
    request: Request,
  ): Promise<{ response: Response; route: RouteName | 'unknown' }> => {
    const url = new URL(request.url)
    const path = url.pathname.startsWith(`${basePath}/`)
      ? url.pathname.slice(basePath.length)
      : undefined
    const matched = path === undefined ? undefined : matchRoute(path)
    // A route the flavor lacks is logged under its name (a client's Stop attempt stays countable).
    const name = matched?.name ?? 'unknown'
    // Whatever goes wrong becomes an answer: `fetch` never rejects, so the host never drops a
    // socket without answering.
    try {
      if (!matched || !flavor.serves(matched.name)) {
        return { route: name, response: flavor.noRoute(request.method, url.pathname) }
      }
      const method = routeMethods[matched.name]
      if (cors !== undefined && request.method === 'OPTIONS') {
        return { route: name, response: preflightResponse(cors, method, request) }
      }
      if (request.method !== method) {
        return { route: name, response: flavor.noRoute(request.method, url.pathname, method) }
      }
      return { route: name, response: await route(request, matched) }
    } catch (error) {
      if (error instanceof ReadyAnswer) return { route: name, response: error.response }
      if (error instanceof RestError) {
        return { route: name, response: flavor.errorResponse(error, request) }
      }
      if (request.signal.aborted) return { route: name, response: abandoned() }
      const failure = new RestError(
        'server_error',
        'The reference server failed on this request; try again.',
      )
      return { route: name, response: flavor.errorResponse(failure, request) }
    }
  }

  const allowOrigin = corsHeaders(cors)

  const log = (request: Request, route: RouteName | 'unknown', status: number) => {
    const entry: RequestLogEntry = {
      method: request.method,
      path: new URL(request.url).pathname,
      route,
      userId: flavor.authenticate(request.headers)?.id,
      status,
    }
    keepLatest(requests, entry, logLimit)
    const countKey = `${route} ${request.method}`
    const counted = requestCounts.get(countKey)
    if (counted) counted.count++
    else requestCounts.set(countKey, { route, method: request.method, count: 1 })
  }

  return {
    async fetch(request) {
      const { response, route: name } = await handle(request)
      log(request, name, response.status)
      for (const [header, value] of Object.entries(allowOrigin)) response.headers.set(header, value)
      return response
    },
    subscribePush: (userId, listener) => store.push.subscribe(userId, listener),
    authenticate: (headers) => flavor.authenticate(headers),
    flavor: flavor.name,
    credentials: (userId) => flavor.credentials(userId),
    namesUser: (headers) => flavor.namesUser(headers),
    admitPushSocket: (url, headers) =>
      flavor.admitPushSocket(url, flavor.pushUser(headers), originMaySendCookies(headers, cors)),
    mainId,
    store,
    basePath,
    cors,
    inspect: {
      threads: () => structuredClone([...store.threads.values()]),
      history: (threadId, ownerId) => {
        for (const thread of store.threads.values()) {
          if (thread.id === threadId && (ownerId === undefined || thread.ownerId === ownerId)) {
            return snapshotOf(thread)
          }
        }
        return undefined
      },
      executions: () => structuredClone([...store.executions.values()]),
      running: () => [...running.keys()],
      hasListener: (executionId) => running.get(executionId)?.stream.cancelled === false,
      recordings,
      requests,
      countRequests: ({ route: name, method }) => {
        let total = 0
        for (const counted of requestCounts.values()) {
          if (name !== undefined && counted.route !== name) continue
          if (method !== undefined && counted.method !== method) continue
          total += counted.count
        }
        return total
      },
    },
    async close() {
      unregisterRelay()
      const finishing = [...running.values()].map((execution) => {
        execution.controller.abort('close')
        return execution.finished
      })
      for (const end of [...pushStreams]) end()
      await Promise.all(finishing)
    },
  }
}

/** A suspension that was resumed or cancelled is no longer open, nor waiting in its part. */
function closeSuspension(thread: ThreadRecord, runId: string, rejection?: string): void {
  const suspension = thread.openSuspensions.find((open) => open.runId === runId)
  thread.openSuspensions = thread.openSuspensions.filter((open) => open.runId !== runId)
  if (!suspension) return
  for (const message of thread.messages) {
    for (const part of message.content) {
      if (part.type !== 'tool-call' || part.toolCallId !== suspension.toolCallId) continue
      delete part.suspendPayload
      if (rejection !== undefined) {
        part.state = 'rejected'
        part.error = rejection
      }
    }
  }
}

/** Appends to a log that keeps only its latest `limit` entries. */
function keepLatest<T>(log: T[], entry: T, limit: number): void {
  log.push(entry)
  if (log.length > limit) log.splice(0, log.length - limit)
}
