import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, type WebSocket } from 'ws'
import type { PreviewChatBackend } from '../backend'
import { headersOf } from './request'

/**
 * Serves `GET <base>/push` as a WebSocket: each of the user's connections (every tab) receives
 * `agentExecutionUpdated` for that user's executions only. It authenticates like REST; a browser
 * sends the cookie with the upgrade request.
 */
export function attachWebSocketPush(server: Server, backend: PreviewChatBackend): () => void {
  const wss = new WebSocketServer({ noServer: true })

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy())
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (url.pathname !== `${backend.basePath}/push`) return refuse(socket, 404, 'Not Found')
    const user = backend.authenticate(headersOf(req))
    if (!user) return refuse(socket, 401, 'Unauthorized')
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      const unsubscribe = backend.subscribePush(user.id, (message) => {
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message))
      })
      ws.on('close', unsubscribe)
      ws.on('error', () => ws.terminate())
    })
  }
  server.on('upgrade', onUpgrade)

  return () => {
    server.off('upgrade', onUpgrade)
    for (const client of wss.clients) client.terminate()
    wss.close()
  }
}

function refuse(socket: Duplex, status: number, reason: string): void {
  const body = JSON.stringify({
    code: status === 401 ? 'unauthorized' : 'not_found',
    message: reason,
  })
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}
