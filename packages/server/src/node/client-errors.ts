import { maxHeaderSize, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { RestError } from '../http'
import { refuseSocket } from './refuse'

/**
 * Answers what Node's HTTP parser refuses, where Node would only close the connection: 431 for
 * headers (or a path) over its limit, 408 for a request that did not arrive in time, 400 for
 * anything else that is not HTTP/1.1, and 405 for CONNECT. `headers` go on every such answer.
 */
export function answerClientErrors(
  server: Server,
  headers: Readonly<Record<string, string>>,
): void {
  // Per connection, the requests not yet answered, and a refusal waiting for them: a parse error
  // after them (a pipelined request) is answered once they are, as writing it first would corrupt
  // their answers.
  const answering = new WeakMap<Duplex, Set<IncomingMessage>>()
  const waiting = new WeakMap<Duplex, () => void>()
  const refused = new WeakSet<Duplex>()

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket
    let open = answering.get(socket)
    if (!open) answering.set(socket, (open = new Set()))
    const requests = open
    requests.add(req)
    res.once('close', () => {
      requests.delete(req)
      if (requests.size === 0) waiting.get(socket)?.()
    })
  })

  server.on(
    'clientError',
    (error: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex) => {
      // The parser reports each later chunk of a refused connection again.
      if (refused.has(socket)) return
      const refusal = refusalOf(error.code)
      const open = [...(answering.get(socket) ?? [])]
      // A request whose own body broke off (the client left mid-body) cannot be answered: closing
      // the connection is what ends its handler's read.
      if (!refusal || !socket.writable || open.some((request) => !request.complete)) {
        socket.destroy()
        return
      }
      refused.add(socket)
      const method = error.rawPacket?.toString('latin1', 0, 5) === 'HEAD ' ? 'HEAD' : undefined
      const refuse = () => {
        if (socket.writable) refuseSocket(socket, refusal, { headers, method })
        else socket.destroy()
      }
      if (open.length > 0) waiting.set(socket, refuse)
      else refuse()
    },
  )

  // CONNECT asks for a tunnel; unanswered, Node would close the connection without a word.
  server.on('connect', (req: IncomingMessage, socket: Duplex) =>
    refuseSocket(
      socket,
      new RestError('method_not_allowed', 'This server is not a proxy: CONNECT is not served.'),
      { headers, method: req.method },
    ),
  )
}

/** The answer to what the parser refused; undefined for a socket fault (nobody to answer). */
function refusalOf(code: string | undefined): RestError | undefined {
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
