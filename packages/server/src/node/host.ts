import { createServer, maxHeaderSize, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import {
  createPreviewChatBackend,
  type PreviewChatBackend,
  type PreviewChatBackendOptions,
} from '../backend'
import { corsHeaders } from '../cors'
import { errorResponse, RestError } from '../http'
import { attachWebSocketPush } from './push'
import { refuseSocket } from './refuse'
import { toFetchRequest, writeFetchResponse } from './request'

export interface StartPreviewChatServerOptions extends PreviewChatBackendOptions {
  /** 4317 by default; 0 picks a free port. */
  port?: number
  /** 127.0.0.1 by default. */
  host?: string
  /** Serve this backend (e.g. one of several mains sharing a store); one is created otherwise. */
  backend?: PreviewChatBackend
  /** Faults of the host itself (never of a client leaving); ignored by default. */
  onError?: (error: unknown) => void
}

export interface PreviewChatServer {
  /** e.g. `http://127.0.0.1:4317`. */
  url: string
  port: number
  backend: PreviewChatBackend
  /** Stops listening, drops every connection, and closes the backend if the host created it. */
  close(): Promise<void>
}

/** Serves the backend over HTTP (REST, SSE turn streams, SSE push) and WebSocket (push). */
export async function startPreviewChatServer(
  options: StartPreviewChatServerOptions = {},
): Promise<PreviewChatServer> {
  const { port = 4317, host = '127.0.0.1', onError = () => undefined } = options
  const ownsBackend = options.backend === undefined
  const backend = options.backend ?? createPreviewChatBackend(options)
  let origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  // Responses not yet complete, per connection: a parse error on a connection that is still
  // answering (a pipelined request) cannot be answered without corrupting that answer.
  const answering = new WeakMap<Duplex, number>()
  const sockets = new Set<Socket>()

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    res.on('error', () => undefined)
    answering.set(req.socket, (answering.get(req.socket) ?? 0) + 1)
    res.once('close', () => answering.set(req.socket, (answering.get(req.socket) ?? 1) - 1))
    let request: Request
    try {
      request = toFetchRequest(req, res, origin)
    } catch (error) {
      const refusal =
        error instanceof RestError ? error : new RestError('bad_request', String(error))
      void writeFetchResponse(errorResponse(refusal, corsHeaders(backend.cors)), res)
      return
    }
    backend
      .fetch(request)
      .then((response) => writeFetchResponse(response, res))
      .catch((error: unknown) => {
        onError(error)
        if (!res.headersSent) res.statusCode = 500
        res.destroy()
      })
  })
  // What the parser refuses gets an answer too, where Node would only close the connection.
  const refused = new WeakSet<Duplex>()
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    // The parser reports each later chunk of a refused connection again.
    if (refused.has(socket)) return
    const refusal = clientErrorOf(error.code)
    if (!refusal || !socket.writable || (answering.get(socket) ?? 0) > 0) {
      socket.destroy()
      return
    }
    refused.add(socket)
    refuseSocket(socket, refusal, corsHeaders(backend.cors))
  })
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  const detachPush = attachWebSocketPush(server, backend)

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const actualPort = (server.address() as AddressInfo).port
  origin = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`

  return {
    url: origin,
    port: actualPort,
    backend,
    async close() {
      detachPush()
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      // Every connection: also the refused ones still lingering, which no HTTP response owns.
      for (const socket of sockets) socket.destroy()
      if (ownsBackend) await backend.close()
      await closed
    },
  }
}

/** The answer to what the HTTP parser refused; undefined for a socket fault (nobody to answer). */
function clientErrorOf(code: string | undefined): RestError | undefined {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new RestError(
      'headers_too_large',
      `The request line and headers are larger than this server reads (${maxHeaderSize} bytes).`,
      'Send a shorter path, fewer or shorter headers and cookies.',
    )
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new RestError('request_timeout', 'The request did not arrive in time.')
  }
  if (code?.startsWith('HPE_')) {
    return new RestError('bad_request', `The request is not valid HTTP/1.1 (${code}).`)
  }
  return undefined
}
