import type { IncomingMessage, ServerResponse } from 'node:http'
import { RestError } from '../http'

/** The Fetch `Headers` of a Node request. */
export function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item)
  }
  return headers
}

/**
 * The URL a request names on `origin`, or undefined for a target that is not a path (`*`, or
 * garbage). A path stays a path even when it starts with `//`, which `new URL(path, origin)` would
 * read as another host; an absolute target (`http://host/path`, as sent to a proxy) keeps only its
 * path and query.
 */
export function requestUrl(req: IncomingMessage, origin: string): URL | undefined {
  const target = req.url ?? '/'
  try {
    if (target.startsWith('/')) return new URL(`${origin}${target}`)
    const absolute = new URL(target)
    return new URL(`${origin}${absolute.pathname}${absolute.search}`)
  } catch {
    return undefined
  }
}

/**
 * The request body as a web stream. Unlike `Readable.toWeb`, cancelling it (a body refused as too
 * large) drains the rest instead of destroying the socket, so the 413 answer still reaches the
 * client.
 */
function bodyOf(req: IncomingMessage, res: ServerResponse): ReadableStream<Uint8Array> {
  let finished = false
  return new ReadableStream<Uint8Array>({
    start(controller) {
      // Once the answer is complete, what the handler left unread (a 401 before the body, a 413
      // at its declared length) is read and dropped, as Node does for a body nobody listens to:
      // left in the socket, it would sit in front of the next request on this keep-alive
      // connection, which would then never be parsed.
      res.once('finish', () => {
        if (finished) return
        finished = true
        controller.error(new Error('The answer was sent before the body was read.'))
        req.resume()
      })
      req.pause()
      req.on('data', (chunk: Buffer) => {
        if (finished) return
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
        if ((controller.desiredSize ?? 0) <= 0) req.pause()
      })
      req.on('end', () => {
        if (finished) return
        finished = true
        controller.close()
      })
      // A client that disconnects mid-write: the read fails, the handler abandons the request.
      req.on('close', () => {
        if (finished) return
        finished = true
        controller.error(new Error('The client closed the connection before the body ended.'))
      })
    },
    pull() {
      req.resume()
    },
    cancel() {
      finished = true
      req.resume()
    },
  })
}

/**
 * Converts a Node request into a Fetch `Request` whose signal aborts when the client goes away
 * before the answer is complete (the backend then knows that nobody listens any more). Throws a
 * `RestError` (400) when the request target is not a path.
 */
export function toFetchRequest(req: IncomingMessage, res: ServerResponse, origin: string): Request {
  const url = requestUrl(req, origin)
  if (!url) throw new RestError('bad_request', 'The request target is not a path.')
  const controller = new AbortController()
  res.on('close', () => {
    if (!res.writableFinished) controller.abort()
  })
  req.on('error', () => controller.abort())
  const method = req.method ?? 'GET'
  const hasBody = method !== 'GET' && method !== 'HEAD'
  const init: RequestInit & { duplex?: 'half' } = {
    method,
    headers: headersOf(req),
    signal: controller.signal,
    ...(hasBody && { body: bodyOf(req, res), duplex: 'half' }),
  }
  return new Request(url, init)
}

/**
 * Streams a Fetch `Response` to the Node response with backpressure. A client that leaves cancels
 * the body (which the SSE writer turns into dropped writes), never an unhandled error.
 */
export async function writeFetchResponse(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status
  response.headers.forEach((value, name) => res.setHeader(name, value))
  if (!response.body) {
    res.end()
    return
  }
  res.flushHeaders()
  const reader = response.body.getReader()
  const onClose = () => {
    reader.cancel().catch(() => undefined)
  }
  res.on('close', onClose)
  // A body that errors (a stream whose reader left too much unread) drops the connection at once,
  // also while waiting below for a peer that does not read to drain what was written.
  reader.closed.catch(() => res.destroy())
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done || res.destroyed) break
      if (!res.write(value)) await drained(res)
    }
    if (!res.destroyed) res.end()
  } catch {
    res.destroy()
  } finally {
    res.off('close', onClose)
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}
