import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import { errorBody, jsonHeaders, type RestError } from '../http'

/** How long a refused socket still reads (and drops) what the client sends before closing. */
const lingerMs = 2000

export interface RefuseOptions {
  headers?: Readonly<Record<string, string>>
  /** The request's method, when known: the answer to a HEAD has no body. */
  method?: string | undefined
}

/**
 * Answers with a JSON error on a socket that no HTTP response owns (a refused WebSocket upgrade, a
 * request the parser rejected), then closes it. It goes on reading for a moment first: closing a
 * socket with unread input resets it, and a reset can destroy the answer before the client reads
 * it (the rest of 64 KB of headers is still arriving when the parser gives up).
 */
export function refuseSocket(socket: Duplex, error: RestError, options: RefuseOptions = {}): void {
  const body = JSON.stringify(errorBody(error))
  const head = {
    ...jsonHeaders,
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
    ...options.headers,
  }
  const lines = Object.entries(head).map(([name, value]) => `${name}: ${value}\r\n`)
  socket.on('error', () => socket.destroy())
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\n${lines.join('')}\r\n${
      options.method === 'HEAD' ? '' : body
    }`,
  )
  socket.resume()
  setTimeout(() => socket.destroy(), lingerMs).unref()
}
