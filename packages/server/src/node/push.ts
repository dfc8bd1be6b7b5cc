import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'
import type { Timers } from '@preview-chat/core'
import { WebSocketServer, type WebSocket } from 'ws'
import type { PreviewChatBackend } from '../backend'
import { corsHeaders } from '../cors'
import { RestError } from '../http'
import { platformTimers } from '../sleep'
import { pushQueueLimitBytes } from '../sse'
import { refuseSocket } from './refuse'
import { headersOf, requestUrl } from './request'

export interface AttachWebSocketPushOptions {
  /**
   * The names the server is bound to (`--host`), which are its own besides loopback ones and the
   * address each connection arrived at (see `PreviewChatBackend.admitPushSocket`).
   */
  hosts?: readonly string[]
  /**
   * How often each connection is pinged (30 s by default, as the SSE `:ping`); one that has not
   * answered the previous ping with a pong by the next is terminated. 0 pings never.
   */
  pingMs?: number
  /** The timers of the pings (the platform's by default). */
  timers?: Pick<Timers, 'setTimeout' | 'clearTimeout'>
}

/**
 * Serves `GET <base>/push` as a WebSocket: each of the user's connections (every tab) receives
 * `agentExecutionUpdated` for that user's executions only. It authenticates like REST; a browser
 * sends the cookie with the upgrade request from any page, so a page of another origin than this
 * server's or `cors`'s is refused (`admitPushSocket` checks the `Origin`). Every refusal is the
 * contract's JSON error, but for what the backend's flavor decides otherwise (`admitPushSocket`:
 * n8n 2.41 completes the handshake and closes, or serves no WebSocket at all).
 */
export function attachWebSocketPush(
  server: Server,
  backend: PreviewChatBackend,
  options: AttachWebSocketPushOptions = {},
): () => void {
  const wss = new WebSocketServer({ noServer: true })
  const heartbeat = { pingMs: options.pingMs ?? 30_000, timers: options.timers ?? platformTimers }
  const subscribe = (ws: WebSocket, userId: string) => {
    const unsubscribe = backend.subscribeAllPush(userId, (message) => {
      if (ws.readyState !== ws.OPEN) return
      // A peer that does not read is dropped, not buffered for: it reads history when it is back.
      if (ws.bufferedAmount > pushQueueLimitBytes) return ws.terminate()
      ws.send(JSON.stringify(message))
    })
    const stopBeating = beat(ws, heartbeat)
    ws.on('close', () => {
      stopBeating()
      unsubscribe()
    })
    ws.on('error', () => ws.terminate())
  }
  const cors = corsHeaders(backend.cors)
  // ws refuses a malformed handshake itself, in text/html, unless someone listens here.
  wss.on('wsClientError', (error, socket) =>
    refuseSocket(socket, new RestError('bad_request', error.message), {
      headers: { ...cors, 'Sec-WebSocket-Version': '13, 8' },
    }),
  )

  const upgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const answer = { method: req.method, headers: cors }
    const pushPath = `${backend.basePath}/push`
    // The page scheme that reaches this server: https only over TLS (a server of node:https).
    const tls = (req.socket as { encrypted?: boolean }).encrypted === true
    const url = requestUrl(req, tls ? 'https://localhost' : 'http://localhost')
    if (url?.pathname !== pushPath) {
      return refuseSocket(
        socket,
        new RestError('not_found', `The only WebSocket here is ${pushPath}.`),
        answer,
      )
    }
    if (req.method !== 'GET') {
      return refuseSocket(
        socket,
        new RestError('method_not_allowed', `${pushPath} answers GET, not ${req.method}.`),
        { ...answer, headers: { ...cors, Allow: 'GET' } },
      )
    }
    const own = [...(options.hosts ?? []), req.socket.localAddress ?? '']
    const admission = await backend.admitPushSocket(url, headersOf(req), own)
    // The peer may have gone while its credentials were checked.
    if (socket.destroyed) return
    switch (admission.kind) {
      case 'refuse':
        return refuseSocket(socket, admission.error, answer)
      case 'drop':
        return socket.destroy()
      case 'close':
        return wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
          ws.on('error', () => ws.terminate())
          if (admission.message !== undefined) ws.send(admission.message)
          ws.close(admission.code)
        })
      case 'accept':
        return wss.handleUpgrade(req, socket, head, (ws: WebSocket) =>
          subscribe(ws, admission.userId),
        )
    }
  }

  // An exception in an `upgrade` listener would end the process: none may escape.
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy())
    const failed = () => {
      if (socket.writable) {
        refuseSocket(
          socket,
          new RestError('server_error', 'The reference server failed on this request; try again.'),
          { method: req.method, headers: cors },
        )
      } else socket.destroy()
    }
    try {
      upgrade(req, socket, head).catch(failed)
    } catch {
      failed()
    }
  }
  server.on('upgrade', onUpgrade)

  return () => {
    server.off('upgrade', onUpgrade)
    for (const client of wss.clients) client.terminate()
    wss.close()
  }
}

/**
 * Pings the peer every `pingMs`; a peer that has not answered the last ping with a pong is
 * terminated (a dead peer's subscription would otherwise live on). Returns what stops it.
 */
function beat(
  ws: WebSocket,
  { pingMs, timers }: { pingMs: number; timers: Pick<Timers, 'setTimeout' | 'clearTimeout'> },
): () => void {
  if (pingMs <= 0) return () => undefined
  let answered = true
  let timer: unknown
  const next = () => {
    timer = timers.setTimeout(() => {
      if (!answered) return ws.terminate()
      answered = false
      ws.ping()
      next()
    }, pingMs)
  }
  ws.on('pong', () => {
    answered = true
  })
  next()
  return () => timers.clearTimeout(timer)
}
