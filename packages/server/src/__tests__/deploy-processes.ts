/**
 * A deployment of real processes for the `*.deploy.test.ts` files and `bench/scale.ts`: one Postgres and one Redis
 * (scripts/services), two or three server processes (`cli.ts --store … --bus …`, each its own
 * main), and a round-robin proxy in front of them, as a load balancer without affinity. Every
 * process ends with `stop()`, and with this process if a test leaves early.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { Agent, createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { startPostgres, type TestPostgres } from '../../../../scripts/services/postgres.mjs'
import { startRedis, type TestRedis } from '../../../../scripts/services/redis.mjs'

const serverRoot = fileURLToPath(new URL('../..', import.meta.url))
const cli = fileURLToPath(new URL('../cli.ts', import.meta.url))

/** One server process: its main's id, its own URL, and the process. */
export interface Instance {
  readonly mainId: string
  readonly url: string
  readonly child: ChildProcess
  /** What it wrote to stderr (its deployment errors), for a failing test's message. */
  readonly errors: string[]
}

export interface Deployment {
  readonly postgres: TestPostgres
  readonly redis: TestRedis
  readonly instances: Instance[]
  /** The round-robin proxy: each request goes to the next live instance. */
  readonly proxy: { url: string }
  /** Starts one more instance (e.g. after one was killed). */
  addInstance(mainId: string): Promise<Instance>
  /** SIGKILL: no goodbye, no lease released (the proxy skips it from now on). */
  kill(instance: Instance): void
  stop(): Promise<void>
}

export interface DeploymentOptions {
  instances: number
  /** Lease period of every instance (short in tests: a dead one is found within a few). */
  leaseMs?: number
  deltaMs?: number
  snapshotMs?: number
}

const everyChild = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of everyChild) child.kill('SIGKILL')
})

/** Starts Postgres, Redis, `instances` server processes and the proxy. */
export async function startDeployment(options: DeploymentOptions): Promise<Deployment> {
  const postgres = await startPostgres()
  const redis = await startRedis().catch(async (error: unknown) => {
    await postgres.stop()
    throw error
  })
  const instances: Instance[] = []
  const live = new Set<Instance>()
  const addInstance = async (mainId: string) => {
    const instance = await startInstance(mainId, postgres.url, redis.url, options)
    instances.push(instance)
    live.add(instance)
    return instance
  }
  let proxy: Server | undefined
  const stop = async () => {
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()))
    proxy?.closeAllConnections()
    await Promise.all(instances.map(endInstance))
    await redis.stop()
    await postgres.stop()
  }
  try {
    // One after the other: the first migrates, the others find it done.
    for (let index = 1; index <= options.instances; index++) await addInstance(`main-${index}`)
    proxy = await startProxy(() => [...live])
    const { port } = proxy.address() as AddressInfo
    return {
      postgres,
      redis,
      instances,
      proxy: { url: `http://127.0.0.1:${port}` },
      addInstance,
      kill(instance) {
        live.delete(instance)
        instance.child.kill('SIGKILL')
      },
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}

/** One `cli.ts` process: on `storeUrl` and `busUrl`, or (both undefined) on memory alone. */
export async function startInstance(
  mainId: string,
  storeUrl: string | undefined,
  busUrl: string | undefined,
  options: Omit<DeploymentOptions, 'instances'>,
): Promise<Instance> {
  const args = [
    ...['--import', 'tsx', '--conditions=@preview-chat/source', cli],
    ...['--port', '0', '--main-id', mainId],
    ...(storeUrl === undefined
      ? []
      : ['--store', storeUrl, '--lease-ms', String(options.leaseMs ?? 500)]),
    ...(busUrl === undefined ? [] : ['--bus', busUrl]),
    ...[
      '--delta-ms',
      String(options.deltaMs ?? 20),
      '--snapshot-ms',
      String(options.snapshotMs ?? 50),
    ],
  ]
  const child = spawn(process.execPath, args, {
    cwd: serverRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  everyChild.add(child)
  const errors: string[] = []
  child.once('exit', (code, signal) => {
    everyChild.delete(child)
    if (process.env.PREVIEW_CHAT_DEPLOY_DEBUG) console.error(`[${mainId}] exited ${code} ${signal}`)
  })
  createInterface({ input: child.stderr! }).on('line', (line) => {
    errors.push(line)
    if (process.env.PREVIEW_CHAT_DEPLOY_DEBUG) console.error(`[${mainId}] ${line}`)
  })
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const listening = /^listening on (http:\/\/\S+)/.exec(line)
      if (listening) resolve(listening[1]!)
    })
    child.once('exit', (code) =>
      reject(
        new Error(`instance ${mainId} exited (${code}) before listening: ${errors.join('\n')}`),
      ),
    )
  })
  return { mainId, url, child, errors }
}

/** SIGTERM, then SIGKILL if it has not ended after a while; resolves once it has exited. */
export function endInstance(instance: Instance): Promise<void> {
  const { child } = instance
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 5000)
    child.once('exit', () => {
      clearTimeout(kill)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

/**
 * A round-robin HTTP proxy over the instances `live()` names, streams passed through as they
 * come: no affinity, so consecutive requests of one client land on different instances. As a
 * load balancer does, it keeps a client's idle connection longer (60 s) than the client keeps it
 * (undici: the server's hint less a second), and opens a connection to an instance per request:
 * with Node's 5 s on both sides, a loaded machine let a client reuse a connection the proxy was
 * closing, or the proxy one an instance was closing (a `fetch failed`, ECONNRESET, seen in 2 of 9
 * loaded runs of the conformance test; not in the deployment under test).
 */
export function startProxy(live: () => readonly Pick<Instance, 'url'>[]): Promise<Server> {
  let next = 0
  const agent = new Agent({ keepAlive: false })
  const server = createServer((incoming, outgoing) => {
    const targets = live()
    const target = new URL(targets[next++ % targets.length]!.url)
    const forwarded = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
        agent,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      },
    )
    forwarded.on('error', () => {
      if (!outgoing.headersSent) outgoing.writeHead(502).end()
      else outgoing.destroy()
    })
    outgoing.on('close', () => {
      forwarded.destroy()
      // What the client still sends of a body the instance answered before reading it all (a 413
      // at its declared length) is read and dropped, as Node does for a body nobody reads (and a
      // load balancer reads a whole body first): left in the socket, it would sit in front of
      // the client's next request on this kept-alive connection, which would never be answered.
      incoming.unpipe(forwarded)
      incoming.resume()
    })
    incoming.pipe(forwarded)
  })
  server.keepAliveTimeout = 60_000
  server.headersTimeout = 61_000
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}
