/**
 * The deployment suites' round-robin proxy (`startProxy`), the stand-in for a load balancer in
 * front of several instances, behaves as one: a body its instance answered before reading it all
 * (a 413 at its declared length) is read and dropped, so the client's kept-alive connection takes
 * its next request. Left in the socket, those bytes sat in front of that request, which was never
 * answered: the deployment's conformance run then failed its next check at its deadline
 * ("no end while waiting for an answer"), twice in four runs of the unit step.
 */
import { Agent, createServer, request, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { startProxy } from './deploy-processes'

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

const listening = (server: Server) =>
  new Promise<string>((resolve) => {
    servers.push(server)
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    )
  })

/** One request on `agent`: its status and body. */
function send(agent: Agent, url: string, method: string, body?: string) {
  return new Promise<{ status: number; body: string; socket: unknown }>((resolve, reject) => {
    const sent = request(url, { method, agent }, (answer: IncomingMessage) => {
      let text = ''
      answer.setEncoding('utf8')
      answer.on('data', (chunk: string) => (text += chunk))
      answer.on('end', () =>
        resolve({ status: answer.statusCode ?? 0, body: text, socket: sent.socket }),
      )
    })
    sent.on('error', reject)
    sent.end(body)
  })
}

describe('the deployment suites’ round-robin proxy [R-DEPLOY-CONFORMANCE]', () => {
  it('reads and drops the rest of a body its instance answered before reading it, so the next request on that connection is answered', async () => {
    // An instance that refuses a large body at once, as the server does past 1 MiB, and then
    // drains it itself.
    const instance = await listening(
      createServer((incoming, outgoing) => {
        if (incoming.method === 'POST') {
          outgoing.once('finish', () => incoming.resume())
          outgoing.writeHead(413).end('{"code":"payload_too_large","message":"too large"}')
        } else outgoing.writeHead(404).end('{"code":"not_found","message":"no such thread"}')
      }),
    )
    const proxy = await startProxy(() => [{ url: instance }])
    servers.push(proxy)
    const at = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
    // One connection, kept alive: the next request goes on it once this one is written.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const refused = await send(agent, at, 'POST', 'x'.repeat(4 * 1024 * 1024))
      expect(refused.status).toBe(413)
      const next = await send(agent, at, 'GET')
      expect(next).toMatchObject({ status: 404, body: expect.stringContaining('not_found') })
      expect(next.socket).toBe(refused.socket)
    } finally {
      agent.destroy()
    }
  })
})
