import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import {
  createPreviewChatBackend,
  type PreviewChatBackend,
  type PreviewChatBackendOptions,
} from '../backend'
import { corsHeaders } from '../cors'
import { errorResponse, RestError } from '../http'
import { answerClientErrors } from './client-errors'
import { attachWebSocketPush } from './push'
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
  /**
   * On SIGTERM or SIGINT, shut down gracefully (`backend.shutdown({ graceMs: shutdownGraceMs })`,
   * then close) and exit. Off by default (a library does not own the process); the CLI turns it on.
   */
  handleSignals?: boolean
  /** The grace period of running turns on a signal, in ms (10,000 by default). */
  shutdownGraceMs?: number
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
  const cors = corsHeaders(backend.cors)
  let origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    res.on('error', () => undefined)
    let request: Request
    try {
      request = toFetchRequest(req, res, origin)
    } catch (error) {
      const refusal =
        error instanceof RestError ? error : new RestError('bad_request', String(error))
      void writeFetchResponse(errorResponse(refusal, cors), res)
      return
    }
    backend
      .fetch(request, { ownHosts: [host, req.socket.localAddress ?? ''] })
      .then((response) => writeFetchResponse(response, res))
      .catch((error: unknown) => {
        onError(error)
        if (!res.headersSent) res.statusCode = 500
        res.destroy()
      })
  })
  answerClientErrors(server, cors)
  // Every connection, to drop them all on close: also refused ones that no HTTP response owns.
  const sockets = new Set<Socket>()
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  const detachPush = attachWebSocketPush(server, backend, {
    hosts: [host],
    ...(options.pingMs !== undefined && { pingMs: options.pingMs }),
    ...(options.timers && { timers: options.timers }),
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const actualPort = (server.address() as AddressInfo).port
  origin = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`

  const close = async () => {
    process.off('SIGTERM', onSignal)
    process.off('SIGINT', onSignal)
    detachPush()
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    for (const socket of sockets) socket.destroy()
    if (ownsBackend) await backend.close()
    await closed
  }
  // SIGTERM: no new turns, running ones get the grace period, then end as `error`; then exit.
  let signalled = false
  function onSignal() {
    if (signalled) return
    signalled = true
    const graceMs = options.shutdownGraceMs ?? 10_000
    void backend
      .shutdown({ graceMs })
      .then(close)
      .finally(() => process.exit(0))
  }
  if (options.handleSignals) {
    process.once('SIGTERM', onSignal)
    process.once('SIGINT', onSignal)
  }

  return { url: origin, port: actualPort, backend, close }
}
