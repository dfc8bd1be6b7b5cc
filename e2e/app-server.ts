// Serves the built chat app and proxies `/rest` (HTTP and the push WebSocket) to the reference
// server, the way the Vite dev server does in `pnpm demo`, with extras: the proxy can cut the
// responses and sockets it carries, which is what a network drop does to a browser; it can hold a
// message's POST on its way to the server, so that a test closes its tab mid-send; and it can hold
// that POST's answer, or what the server pushes, so that a test picks which a page hears first.
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import {
  createServer,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { extname, join, normalize } from 'node:path'

/** A message's POST (`POST …/chat`, not a resume) as the proxy saw it. */
export interface ChatPost {
  message: string | undefined
  messageId: string | undefined
  /** Sent on to the server (false while held, and for good once its page left meanwhile). */
  reached: boolean
}

/** A message's POST held before the server: the page that sent it waits for its answer. */
export interface HeldChatPost {
  readonly post: ChatPost
  /** Sends it on to the server, and its answer back. */
  release(): void
  /** Settles when its page left (closed, reloaded) while it was held: it never reached the server. */
  readonly dropped: Promise<void>
}

/** A message POST's answer held before the page: the server has the message, the page not its answer. */
export interface HeldChatAnswer {
  readonly post: ChatPost
  /** Sends the answer on to the page (what the server wrote meanwhile, then the rest). */
  release(): void
}

export interface AppServer {
  url: string
  /** Every message POST the proxy carried, in the order they arrived. */
  readonly chatPosts: readonly ChatPost[]
  /**
   * From now on (`false`: no longer), holds each message POST before it reaches the server, until
   * the test releases it (`nextHeldPost`). One already held stays held.
   */
  holdChatPosts(hold: boolean): void
  /** The oldest held POST the test has not taken yet (waits for one). */
  nextHeldPost(): Promise<HeldChatPost>
  /**
   * From now on (`false`: no longer), holds the answer of each message POST the server has, before
   * the page, until the test releases it (`nextHeldAnswer`). One already held stays held.
   */
  holdChatAnswers(hold: boolean): void
  /** The oldest held answer the test has not taken yet (waits for one). */
  nextHeldAnswer(): Promise<HeldChatAnswer>
  /** Drops every open turn stream (POST …/chat and …/chat/resume): the server's turn goes on. */
  cutTurnStreams(): number
  /** Drops every push WebSocket. */
  cutPush(): number
  /**
   * From now on (`false`: no longer), holds what the server pushes on every WebSocket (held frames
   * wait in order, and reach the page once released).
   */
  holdPush(hold: boolean): void
  close(): Promise<void>
}

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
}

export async function startAppServer(options: {
  root: string
  target: string
}): Promise<AppServer> {
  const upstream = new URL(options.target)
  const turnStreams = new Set<ServerResponse>()
  const pushSockets = new Set<Socket>()
  const pushFlows = new Set<{ hold(): void; flow(): void }>()
  let holdingPush = false
  const sockets = new Set<Socket>()
  const chatPosts: ChatPost[] = []
  let holding = false
  const held: HeldChatPost[] = []
  const heldWaiters: ((post: HeldChatPost) => void)[] = []
  let holdingAnswers = false
  const heldAnswers = taking<HeldChatAnswer>()

  const proxy = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    const isTurn = req.method === 'POST' && /\/chat(\/resume)?$/.test(path)
    let up: ClientRequest | null = null
    let gone = false
    let left = () => {}
    const forward = (body?: Buffer, post?: ChatPost) => {
      up = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (upRes) => {
          const answer = () => {
            if (gone) return
            res.writeHead(upRes.statusCode ?? 502, upRes.headers)
            upRes.pipe(res)
          }
          if (!post || !holdingAnswers) return answer()
          // Not read meanwhile: what the server writes waits in the socket's buffers.
          upRes.pause()
          let released = false
          heldAnswers.put({
            post,
            release() {
              if (released) return
              released = true
              answer()
            },
          })
        },
      )
      up.on('error', () => res.destroy())
      if (body) up.end(body)
      else req.pipe(up)
    }
    // The browser left (a reload): leave the server too, as a real connection would.
    res.on('close', () => {
      gone = true
      turnStreams.delete(res)
      up?.destroy()
      left()
    })
    if (isTurn) turnStreams.add(res)
    if (req.method !== 'POST' || !/\/chat$/.test(path)) return forward()
    // A message: its body read whole first, to log what it carries (and to hold it).
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const post: ChatPost = { ...messageOf(body), reached: false }
      chatPosts.push(post)
      const send = () => {
        post.reached = true
        forward(body, post)
      }
      if (gone) return // left before its body was whole: the server never hears of it
      if (!holding) return send()
      let released = false
      const dropped = new Promise<void>((resolve) => {
        left = () => {
          if (!released) resolve()
        }
      })
      const hold: HeldChatPost = {
        post,
        dropped,
        release() {
          if (released || gone) return
          released = true
          send()
        },
      }
      const waiter = heldWaiters.shift()
      if (waiter) waiter(hold)
      else held.push(hold)
    })
  }

  const serveStatic = async (req: IncomingMessage, res: ServerResponse) => {
    const path = normalize(decodeURIComponent((req.url ?? '/').split('?')[0] ?? '/'))
    let file = join(options.root, path)
    if (!file.startsWith(options.root) || !(await stat(file).catch(() => null))?.isFile()) {
      file = join(options.root, 'index.html') // the app's routes live in the query string
    }
    res.writeHead(200, {
      'Content-Type': types[extname(file)] ?? 'application/octet-stream',
      'Cache-Control': 'no-store',
    })
    createReadStream(file).pipe(res)
  }

  const server = createServer((req, res) => {
    if (req.url?.startsWith('/rest/')) proxy(req, res)
    else void serveStatic(req, res)
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const up = connect(Number(upstream.port), upstream.hostname, () => {
      let raw = `${req.method} ${req.url} HTTP/1.1\r\n`
      for (let i = 0; i < req.rawHeaders.length; i += 2)
        raw += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`
      up.write(`${raw}\r\n`)
      if (head.length > 0) up.write(head)
      if (!holdingPush) flow.flow()
      socket.pipe(up)
    })
    // The server's side, to the page: unpiped and paused while held, its bytes waiting in order.
    let piped = false
    const flow = {
      hold() {
        if (!piped) return
        up.unpipe(socket)
        up.pause()
        piped = false
      },
      flow() {
        if (piped) return
        up.pipe(socket)
        piped = true
      },
    }
    pushFlows.add(flow)
    const drop = () => {
      pushFlows.delete(flow)
      pushSockets.delete(socket)
      socket.destroy()
      up.destroy()
    }
    pushSockets.add(socket)
    up.on('error', drop)
    up.on('close', drop)
    socket.on('error', drop)
    socket.on('close', drop)
  })

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    chatPosts,
    holdChatPosts(hold) {
      holding = hold
    },
    nextHeldPost() {
      const next = held.shift()
      return next ? Promise.resolve(next) : new Promise((resolve) => heldWaiters.push(resolve))
    },
    holdChatAnswers(hold) {
      holdingAnswers = hold
    },
    nextHeldAnswer: heldAnswers.take,
    cutTurnStreams() {
      const count = turnStreams.size
      for (const res of turnStreams) res.destroy()
      turnStreams.clear()
      return count
    },
    cutPush() {
      const count = pushSockets.size
      for (const socket of pushSockets) socket.destroy()
      return count
    },
    holdPush(hold) {
      holdingPush = hold
      for (const flow of pushFlows)
        if (hold) flow.hold()
        else flow.flow()
    },
    async close() {
      for (const socket of [...sockets, ...pushSockets]) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** The `message` and `messageId` of a chat POST's JSON body (neither, where it is not JSON). */
function messageOf(body: Buffer): Pick<ChatPost, 'message' | 'messageId'> {
  try {
    const json = JSON.parse(body.toString('utf8')) as { message?: unknown; messageId?: unknown }
    return {
      message: typeof json.message === 'string' ? json.message : undefined,
      messageId: typeof json.messageId === 'string' ? json.messageId : undefined,
    }
  } catch {
    return { message: undefined, messageId: undefined }
  }
}

/** Things given in one order and taken in it: `take` waits for the next one. */
function taking<T>() {
  const given: T[] = []
  const waiters: ((value: T) => void)[] = []
  return {
    put(value: T) {
      const waiter = waiters.shift()
      if (waiter) waiter(value)
      else given.push(value)
    },
    take(): Promise<T> {
      const next = given.shift()
      return next !== undefined
        ? Promise.resolve(next)
        : new Promise((resolve) => waiters.push(resolve))
    },
  }
}
