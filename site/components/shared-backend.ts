/**
 * One in-page backend for all the docs' tabs, so that a second tab follows the first one's live
 * chat. msw's worker answers each tab's requests with that tab's own handlers, so two tabs would
 * have two backends, each with its own threads. Here one tab hosts the backend (it holds a Web
 * Lock) and the others forward their requests to it over a BroadcastChannel, the answer's body
 * streamed back chunk by chunk (a turn's stream, the push channel's SSE). When the host goes (a
 * reload, a closed tab), the next tab in line for the lock hosts the backend, restored from
 * localStorage where the host saved it (`mountPersistentPreviewChat`): a turn that was running
 * runs on, and the tabs' clients recover their cut streams as they would from any server.
 *
 * Site code only: it uses the msw kit's public API (`mountPersistentPreviewChat`,
 * `previewChatWorker`) and msw's `getResponse`.
 */
import { mountPersistentPreviewChat, previewChatWorker } from '@preview-chat/msw/storybook'
import { getResponse, http, HttpResponse, type RequestHandler } from 'msw'

const name = 'preview-chat-docs:backend'
/** Where the host keeps the backend for the next host (every tab of the site reads it). */
const key = 'preview-chat-docs:backend'

type Message =
  | {
      kind: 'request'
      id: string
      method: string
      url: string
      headers: [string, string][]
      body: ArrayBuffer | null
    }
  | { kind: 'head'; id: string; status: number; statusText: string; headers: [string, string][] }
  | { kind: 'chunk'; id: string; chunk: Uint8Array }
  | { kind: 'end'; id: string }
  | { kind: 'cancel'; id: string }
  /** The host is going: what it was still answering is cut. */
  | { kind: 'gone' }
  /** A new host: what it never got is sent to it again. */
  | { kind: 'host' }

/** A forwarded request's answer, as it arrives. */
interface Pending {
  /** The request, sent again to a new host while no answer has begun. */
  request: Extract<Message, { kind: 'request' }>
  answered: boolean
  head(message: Extract<Message, { kind: 'head' }>): void
  chunk(chunk: Uint8Array): void
  end(): void
  cut(): void
}

/** Answers `GET /__docs/thread?id=…`: whether the backend has that thread (no 404 in a console). */
type ThreadsOf = () => Iterable<{ id: string }>
const threadHandler = (threads: ThreadsOf) =>
  http.get('*/__docs/thread', ({ request }) => {
    const id = new URL(request.url).searchParams.get('id')
    return HttpResponse.json({ exists: [...threads()].some((thread) => thread.id === id) })
  })

const noBody = new Set([101, 204, 205, 304])

let mounted: Promise<void> | undefined

/** Mounts this page's part: the backend's host, or a tab that forwards to it (until it hosts). */
export function mountSharedBackend(options: { deltaMs: number; snapshotMs: number }) {
  mounted ??= (async () => {
    const channel = new BroadcastChannel(name)
    const pending = new Map<string, Pending>()
    const worker = await previewChatWorker()
    /** The host's side, once this tab hosts: what it does with a request or a cancel. */
    let hostSide: ((message: Message) => void) | undefined
    /** To the host: itself when this tab hosts, else the tab that does. */
    const toHost = (message: Message) => {
      if (hostSide) hostSide(message)
      else channel.postMessage(message)
    }
    /** An answer's part, to the tab that asked (this one's own requests included). */
    const receive = (data: Message) => {
      if (data.kind !== 'head' && data.kind !== 'chunk' && data.kind !== 'end') return
      const each = pending.get(data.id)
      if (!each) return
      if (data.kind === 'head') each.head(data)
      else if (data.kind === 'chunk') each.chunk(data.chunk)
      else each.end()
    }

    // Until it hosts: every request of the backend goes to the host.
    const forward = async (request: Request): Promise<Response> => {
      const id = crypto.randomUUID()
      const body =
        request.method === 'GET' || request.method === 'HEAD' ? null : await request.arrayBuffer()
      return new Promise<Response>((resolve) => {
        let controller: ReadableStreamDefaultController<Uint8Array> | undefined
        const stream = new ReadableStream<Uint8Array>({
          start: (each) => {
            controller = each
          },
          cancel: () => {
            pending.delete(id)
            toHost({ kind: 'cancel', id })
          },
        })
        const message: Message = {
          kind: 'request',
          id,
          method: request.method,
          url: request.url,
          headers: [...request.headers],
          body,
        }
        const each: Pending = {
          request: message,
          answered: false,
          head: ({ status, statusText, headers }) => {
            each.answered = true
            resolve(
              new Response(noBody.has(status) ? null : stream, { status, statusText, headers }),
            )
          },
          chunk: (chunk) => controller?.enqueue(chunk),
          end: () => {
            pending.delete(id)
            controller?.close()
          },
          cut: () => {
            pending.delete(id)
            // Before its head: as a connection that failed; after: a stream cut mid-way.
            resolve(Response.error())
            controller?.error(new TypeError('The tab that hosted the backend went away'))
          },
        }
        pending.set(id, each)
        toHost(message)
      })
    }
    /** The host went: what it had begun to answer is cut; the rest waits for the next host. */
    const cutAnswered = () => {
      for (const each of [...pending.values()]) if (each.answered) each.cut()
    }

    channel.onmessage = ({ data }: MessageEvent<Message>) => {
      if (data.kind === 'gone') return cutAnswered()
      if (data.kind === 'host') {
        for (const each of pending.values()) if (!each.answered) channel.postMessage(each.request)
        return
      }
      receive(data)
    }

    // Hosts once it holds the lock (at once when no other tab does), until the page goes.
    const host = async () => {
      // What the last host had begun to answer for this tab is cut; the rest this tab answers.
      cutAnswered()
      let threads: ThreadsOf = () => []
      const handlers = [threadHandler(() => threads())]
      const mock = await mountPersistentPreviewChat({ ...options, storage: localStorage, key }, [
        ...handlers,
      ])
      threads = () => mock.backend.inspect.threads()
      // By their kind, not `instanceof RequestHandler`: the msw kit's handlers come from its own
      // copy of msw (the workspace has two, one per @types/node), so `instanceof` against this
      // module's class left them all out — every forwarded request answered 404, and a second
      // tab only followed through the clients' tab relay, so once reloaded it showed nothing.
      const own = [...handlers, ...mock.handlers].filter(
        (handler): handler is RequestHandler => handler.kind === 'request',
      )
      const readers = new Map<string, ReadableStreamDefaultReader<Uint8Array>>()
      const toTabs = (message: Message) => {
        channel.postMessage(message)
        receive(message)
      }
      const answer = async (message: Extract<Message, { kind: 'request' }>) => {
        const { id, method, url, headers, body } = message
        const request = new Request(url, { method, headers, body })
        const response = (await getResponse(own, request)) ?? new Response(null, { status: 404 })
        toTabs({
          kind: 'head',
          id,
          status: response.status,
          statusText: response.statusText,
          headers: [...response.headers],
        } satisfies Message)
        const reader = response.body?.getReader()
        if (reader) {
          readers.set(id, reader)
          try {
            for (let read = await reader.read(); !read.done; read = await reader.read())
              toTabs({ kind: 'chunk', id, chunk: read.value } satisfies Message)
          } catch {
            // Cancelled by the tab that asked (its client closed the stream).
          } finally {
            readers.delete(id)
          }
        }
        toTabs({ kind: 'end', id } satisfies Message)
      }
      hostSide = (data) => {
        if (data.kind === 'request') void answer(data)
        else if (data.kind === 'cancel') void readers.get(data.id)?.cancel()
      }
      channel.onmessage = ({ data }: MessageEvent<Message>) => hostSide?.(data)
      // This tab's own requests that waited for a host.
      for (const each of pending.values()) if (!each.answered) void answer(each.request)
      addEventListener('pagehide', () => channel.postMessage({ kind: 'gone' } satisfies Message))
      channel.postMessage({ kind: 'host' } satisfies Message)
    }

    /** Holds the lock until the page goes, and hosts meanwhile. */
    const hostWhile = async () => {
      await host()
      await new Promise(() => {})
    }
    const first = await new Promise<boolean>((resolve) => {
      void navigator.locks.request(name, { ifAvailable: true }, async (lock) => {
        resolve(lock !== null)
        if (lock) await new Promise(() => {})
      })
    })
    if (first) return host()
    // Another tab hosts: forward to it now, and host when it goes.
    worker.resetHandlers(
      http.all('*/rest/*', ({ request }) => forward(request)),
      http.get('*/__docs/thread', ({ request }) => forward(request)),
    )
    void navigator.locks.request(name, hostWhile)
  })()
  return mounted
}
