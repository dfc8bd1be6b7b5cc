import {
  createPreviewChatBackend,
  scriptedAgent,
  timerSleep,
  type PreviewChatBackend,
  type PreviewChatBackendOptions,
} from '@preview-chat/server'
import { delay, http, HttpResponse, ws, type RequestHandler, type WebSocketHandler } from 'msw'
import { createSeeder, type Seeder, type TurnMode } from './seed'
import { cutAfterEvents, type CutStreamOptions } from './streamCut'
import { createTurnGate, type InternalTurnGate, type TurnGate } from './turnGate'

/**
 * Options of `createPreviewChatHandlers`: the backend's (`flavor: 'n8n-2.41'` and its
 * `pushBackend` included), plus where and as whom it answers.
 */
export interface PreviewChatHandlersOptions extends Omit<PreviewChatBackendOptions, 'basePath'> {
  /**
   * The REST base the client uses (its `baseUrl`), `/rest` by default. A path matches any origin;
   * an absolute URL (`http://localhost/rest`) matches that origin only.
   */
  baseUrl?: string
  /**
   * The user of requests that name none (no `Authorization: Bearer <user>`, no
   * `preview-chat-user` cookie; with `flavor: 'n8n-2.41'`, no `n8n-auth` cookie: they get that
   * cookie and a `browser-id`). Set it for stories, where the browser's client sends no
   * credentials; switch it later with `actAs`. No default: such requests get 401.
   */
  user?: string
  /**
   * Also mock the WebSocket push channel (`ws(s)://…{base}/push`) with msw's `ws.link`. On by
   * default; it only takes effect where a global `WebSocket` exists (browsers, Node 22+). The
   * n8n-2.41 flavor serves it only with `pushBackend: 'websocket'`, and only with `?pushRef=`.
   */
  websocketPush?: boolean
  /**
   * The project and agent the seeders put threads in unless told otherwise: your component's ids,
   * so that it reads what was seeded. `demo-project` and `demo-agent` by default.
   */
  projectId?: string
  agentId?: string
}

/** How failed history reads fail. */
export type ReadFailure =
  /** An HTTP error answer with the contract's error body. */
  | { status: number; message?: string }
  /** No answer at all (`fetch` rejects, like a dropped connection). */
  | 'network-error'

/** The mounted backend and its scenario controls. */
export interface PreviewChatMock {
  /** The MSW handlers: pass them to `setupServer(...)`, `setupWorker(...)` or `server.use(...)`. */
  readonly handlers: (RequestHandler | WebSocketHandler)[]
  /** The reference backend behind the handlers: `backend.inspect` tells what it handled and recorded. */
  readonly backend: PreviewChatBackend
  /** The REST base the handlers answer under (normalised, no trailing slash). */
  readonly baseUrl: string
  /** The user of requests that name none (see the `user` option). */
  readonly user: string | undefined
  /** Requests that name no user act as `user` from now on (`undefined`: they get 401). */
  actAs(user: string | undefined): void
  /**
   * Cuts the client's copy of the next turn stream (a message or a resume) after `afterEvents`
   * events; each call arms one more stream. The backend's turn goes on and is recorded. Resolves
   * once the cut happened.
   */
  cutNextStream(options: CutStreamOptions): Promise<void>
  /**
   * Fails the next `count` history reads (`GET …/messages`) without reaching the backend: with an
   * HTTP status (503 by default) or a network error. A counter: `Infinity` fails every read from
   * now on (until `reset()`); calls add up, each run of failures after the one before.
   */
  failNextReads(count: number, failure?: ReadFailure): void
  /** Delays every history read by `ms` before it reaches the backend; `0` stops delaying. */
  delayReads(ms: number): void
  /**
   * Holds every turn that starts from now on (and pauses of running ones) until released, so the
   * test advances it one step at a time. Returns the gate; `release()` lets everything run on.
   */
  holdTurns(): TurnGate
  /** Puts threads into states through the backend itself (posting as their owner). */
  readonly seed: Seeder
  /** Drops every armed scenario control (cuts, failures, delays, holds) and releases held turns. */
  reset(): void
  /** Resets, then closes the backend: running turns end as `interrupted`, push streams close. */
  close(): Promise<void>
}

/** The routes a scenario control acts on; everything else goes straight to the backend. */
type Traffic = 'read' | 'turn' | 'other'

function classify(method: string, path: string, basePath: string): Traffic {
  if (!path.startsWith(`${basePath}/projects/`)) return 'other'
  if (method === 'GET' && /\/agents\/v2\/[^/]+\/chat\/[^/]+\/messages$/.test(path)) return 'read'
  if (method === 'POST' && /\/agents\/v2\/[^/]+\/chat(\/resume)?$/.test(path)) return 'turn'
  return 'other'
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * Mounts the reference backend of `@preview-chat/server` into MSW handlers. The handlers import
 * only from `msw`, so the same ones run under `setupServer` in Node tests and under `setupWorker`
 * in the browser. Turn streams and the SSE push channel are the backend's own streamed responses.
 *
 * @example
 * const chat = createPreviewChatHandlers({ deltaMs: 0, snapshotMs: 5 })
 * const server = setupServer(...chat.handlers)
 */
export function createPreviewChatHandlers(
  options: PreviewChatHandlersOptions = {},
): PreviewChatMock {
  const {
    baseUrl: rawBaseUrl,
    user,
    websocketPush = true,
    projectId = 'demo-project',
    agentId = 'demo-agent',
    ...backendOptions
  } = options
  const baseUrl = (rawBaseUrl ?? '/rest').replace(/\/+$/, '')
  const absolute = /^https?:\/\//i.test(baseUrl) ? new URL(baseUrl) : undefined
  const basePath = absolute ? absolute.pathname.replace(/\/+$/, '') : baseUrl
  if (!basePath.startsWith('/')) {
    throw new TypeError(
      `The baseUrl "${rawBaseUrl}" is neither a path nor an http(s) URL; pass e.g. "/rest" or "http://localhost/rest".`,
    )
  }

  let currentUser = user
  let readDelayMs = 0
  // Runs of failures, each with how many reads it still fails (a count, so `Infinity` is one entry).
  const readFailures: { failure: ReadFailure; left: number }[] = []
  const nextReadFailure = (): ReadFailure | undefined => {
    const run = readFailures[0]
    if (!run) return undefined
    if (--run.left <= 0) readFailures.shift()
    return run.failure
  }
  const cuts: { options: CutStreamOptions; done: () => void }[] = []

  // Turns: every agent runs through a wrapper that numbers it and routes its pauses through a
  // gate, so that `holdTurns` and the seeders can hold a turn and release it step by step.
  const sleep = backendOptions.sleep ?? timerSleep
  const innerAgent = backendOptions.agent ?? scriptedAgent
  let globalGate: InternalTurnGate = createTurnGate(false)
  const turnGates = new Map<number, InternalTurnGate>()
  let nextTurn = 0
  let nextTurnMode: TurnMode | undefined
  let pausingTurn: number | undefined

  // A mock is a development server: its users are the built-in ones (or `users`), unless the
  // options bring an `authenticate` of their own.
  const backend = createPreviewChatBackend({
    ...backendOptions,
    dev: true,
    basePath,
    sleep: (ms, signal) => {
      const turn = pausingTurn
      pausingTurn = undefined
      const fallback = () => sleep(ms, signal)
      if (turn === undefined) return fallback()
      const gate = turnGates.get(turn) ?? globalGate
      return gate.pause(turn, signal, fallback)
    },
    agent: async (input, context) => {
      const turn = ++nextTurn
      const mode = nextTurnMode
      nextTurnMode = undefined
      if (mode) turnGates.set(turn, mode.gate)
      try {
        return await innerAgent(input, {
          ...context,
          pause: () => {
            // The backend's sleep runs synchronously inside `pause`: this tells it whose pause it is.
            pausingTurn = turn
            try {
              return context.pause()
            } finally {
              pausingTurn = undefined
            }
          },
        })
      } finally {
        ;(turnGates.get(turn) ?? globalGate).ended(turn)
        turnGates.delete(turn)
      }
    },
  })

  // The mock's user, in the backend flavor's own credentials (a cookie joins the others).
  const credentialsOf = (userId: string, headers = new Headers()): Headers => {
    for (const [name, value] of Object.entries(backend.credentials(userId))) {
      const cookie = name.toLowerCase() === 'cookie' ? headers.get('cookie') : null
      headers.set(name, cookie ? `${cookie}; ${value}` : value)
    }
    return headers
  }
  const withUser = (request: Request): Request => {
    if (currentUser === undefined || backend.namesUser(request.headers)) return request
    return new Request(request, {
      headers: credentialsOf(currentUser, new Headers(request.headers)),
    })
  }

  const restPattern = absolute ? `${absolute.origin}${basePath}/*` : `*${basePath}/*`
  const rest = http.all(restPattern, async ({ request }) => {
    const traffic = classify(request.method, new URL(request.url).pathname, basePath)
    if (traffic === 'read') {
      const failure = nextReadFailure()
      if (failure === 'network-error') return HttpResponse.error()
      if (failure) {
        return HttpResponse.json(
          {
            code: failure.status,
            message: failure.message ?? `Failed on purpose by the MSW scenario (failNextReads).`,
          },
          { status: failure.status },
        )
      }
      if (readDelayMs > 0) await delay(readDelayMs)
    }
    const response = await backend.fetch(withUser(request))
    if (traffic === 'turn' && response.body) {
      const cut = cuts.shift()
      if (cut) {
        return new Response(cutAfterEvents(response.body, cut.options, cut.done), {
          status: response.status,
          headers: response.headers,
        })
      }
    }
    return response
  })

  const handlers: (RequestHandler | WebSocketHandler)[] = [rest]
  if (websocketPush) {
    const host = absolute ? escapeRegExp(absolute.host) : '[^/]+'
    const push = ws.link(new RegExp(`^wss?://${host}${escapeRegExp(basePath)}/push/?(\\?.*)?$`))
    handlers.push(
      push.addEventListener('connection', async ({ client }) => {
        // A browser's WebSocket sends the page's cookies; without a known user there, the mock's.
        const url = new URL(client.url)
        const cookie = typeof document === 'undefined' ? '' : document.cookie
        let admission = await backend.admitPushSocket(url, new Headers({ cookie }))
        if (admission.kind !== 'accept' && currentUser !== undefined) {
          admission = await backend.admitPushSocket(url, credentialsOf(currentUser))
        }
        switch (admission.kind) {
          case 'accept': {
            const unsubscribe = backend.subscribeAllPush(admission.userId, (message) => {
              client.send(JSON.stringify(message))
            })
            client.addEventListener('close', unsubscribe)
            return
          }
          case 'refuse':
            return client.close(4000 + admission.error.status, admission.error.message)
          case 'close':
            if (admission.message !== undefined) client.send(admission.message)
            // No status: what a browser reports as 1005.
            return client.close(admission.code ?? 1005)
          case 'drop':
            return client.close(1006)
        }
      }),
    )
  }

  const seed = createSeeder({
    backend,
    basePath,
    defaultUser: () => currentUser ?? 'alice',
    projectId,
    agentId,
    startTurn: (mode) => {
      nextTurnMode = mode
    },
  })

  const reset = () => {
    readFailures.length = 0
    readDelayMs = 0
    for (const cut of cuts.splice(0)) cut.done()
    globalGate.release()
    globalGate = createTurnGate(false)
  }

  return {
    handlers,
    backend,
    baseUrl,
    get user() {
      return currentUser
    },
    actAs(next) {
      currentUser = next
    },
    cutNextStream(cutOptions) {
      return new Promise<void>((resolve) => cuts.push({ options: cutOptions, done: resolve }))
    },
    failNextReads(count, failure = { status: 503 }) {
      if (!(count >= 1)) return // 0, a negative count or NaN: nothing to fail
      readFailures.push({ failure, left: Math.floor(count) })
    },
    delayReads(ms) {
      readDelayMs = Math.max(0, ms)
    },
    holdTurns() {
      globalGate.hold()
      return globalGate
    },
    seed,
    reset,
    async close() {
      reset()
      for (const gate of turnGates.values()) gate.release()
      await backend.close()
    },
  }
}
