// Serves the built chat app and proxies `/rest` (HTTP and the push WebSocket) to the reference
// server, the way the Vite dev server does in `pnpm demo`, with one extra: the proxy can cut the
// responses and sockets it carries, which is what a network drop does to a browser.
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { extname, join, normalize } from 'node:path'

export interface AppServer {
  url: string
  /** Drops every open turn stream (POST …/chat and …/chat/resume): the server's turn goes on. */
  cutTurnStreams(): number
  /** Drops every push WebSocket. */
  cutPush(): number
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
  const sockets = new Set<Socket>()

  const proxy = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    const isTurn = req.method === 'POST' && /\/chat(\/resume)?$/.test(path)
    const up = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers)
        upRes.pipe(res)
      },
    )
    up.on('error', () => res.destroy())
    req.pipe(up)
    // The browser left (a reload): leave the server too, as a real connection would.
    res.on('close', () => {
      turnStreams.delete(res)
      up.destroy()
    })
    if (isTurn) turnStreams.add(res)
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
      up.pipe(socket)
      socket.pipe(up)
    })
    const drop = () => {
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
    async close() {
      for (const socket of [...sockets, ...pushSockets]) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
