#!/usr/bin/env node
/**
 * `preview-chat-server [options]`: the flags, their defaults and what each does are the table of
 * `cli-flags.ts`, which `--help` prints and the docs site's server page renders.
 * (`pnpm run server …` in this repository)
 *
 * `--store` and `--bus` make this process one instance of a deployment: the record in Postgres,
 * push and Stop across instances on Redis (see the README's "Scaling out"). Without them, one
 * process holds everything in memory. `--mains N` is a simulation for tests only: N mains in this
 * one process, on one memory store and one in-process bus.
 *
 * Serves the reference backend for development. Users are named by `Authorization: Bearer <user>`
 * or the cookie `preview-chat-user=<user>` (alice, bob, carol): no real authentication. With
 * `--flavor n8n-2.41`, by the cookie `n8n-auth=<user>` and a `browser-id` header.
 */
import { parseArgs } from 'node:util'
import { cliFlags, renderHelp } from './cli-flags'
import { createPreviewChatBackend } from './backend'
import { checkCorsOrigin } from './cors'
import { checkAllowedHosts } from './hosts'
import { flavorNames, pushBackends, type FlavorName, type PushBackend } from './flavor'
import { startPreviewChatServer, type PreviewChatServer } from './node/host'
import { createMemoryBus } from './bus/memory'
import type { PreviewChatBus } from './bus/types'
import { consoleLogger } from './log'
import { createMemoryStore } from './store/memory'
import type { PreviewChatStore } from './store/types'

const usage = renderHelp()

/** A flag's default, as the table documents it. */
function defaultOf(name: string): string {
  const value = cliFlags.find((flag) => flag.name === name)?.default
  if (value === undefined) throw new Error(`cli-flags.ts documents no default for --${name}`)
  return value
}

/** The flags of `cliFlags`, as `parseArgs` takes them: a value, or a switch. */
const parseOptions = Object.fromEntries(
  cliFlags.map((flag) => [
    flag.name,
    {
      type: flag.value === undefined ? ('boolean' as const) : ('string' as const),
      ...(flag.multiple && { multiple: true }),
    },
  ]),
)

function numberOption(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < 0) {
    console.error(`--${name} must be a whole number, not "${value}".\n${usage}`)
    process.exit(2)
  }
  return parsed
}

function corsOption(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  try {
    return checkCorsOrigin(value)
  } catch (error) {
    console.error(`--${(error as Error).message}\n${usage}`)
    process.exit(2)
  }
}

function allowedHostsOption(values: string[] | undefined): string[] {
  try {
    return checkAllowedHosts(values ?? [])
  } catch (error) {
    console.error(`--${(error as Error).message.replace('allowedHosts', 'allowed-host')}\n${usage}`)
    process.exit(2)
  }
}

function choice<T extends string>(
  value: string | undefined,
  name: string,
  choices: readonly T[],
): T | undefined {
  if (value === undefined || (choices as readonly string[]).includes(value)) {
    return value as T | undefined
  }
  console.error(`--${name} must be one of ${choices.join(', ')}, not "${value}".\n${usage}`)
  process.exit(2)
}

function exitWith(message: string): never {
  console.error(`${message}\n${usage}`)
  process.exit(2)
}

/** The store and bus `--store` and `--bus` name (loaded only when named), and how to close them. */
async function openDeployment(
  storeUrl: string | undefined,
  busUrl: string | undefined,
): Promise<{ store?: PreviewChatStore; bus?: PreviewChatBus; close(): Promise<void> }> {
  if (storeUrl !== undefined && !/^postgres(ql)?:\/\//.test(storeUrl)) {
    exitWith(`--store must be a postgres:// URL, not "${storeUrl}".`)
  }
  if (busUrl !== undefined && !/^rediss?:\/\//.test(busUrl)) {
    exitWith(`--bus must be a redis:// or rediss:// URL, not "${busUrl}".`)
  }
  const store =
    storeUrl === undefined
      ? undefined
      : await (
          await import('./postgres/store')
        ).createPostgresStore({
          connectionString: storeUrl,
          onPoolError: (error) => console.error(`postgres: ${error.message}`),
        })
  const bus =
    busUrl === undefined
      ? undefined
      : await (
          await import('./redis/bus')
        ).createRedisBus({
          url: busUrl,
          logger: (entry) => console.error(`redis: ${entry.message}`),
        })
  return {
    store,
    bus,
    async close() {
      await bus?.close()
      await store?.close()
    },
  }
}

async function main(): Promise<void> {
  const { values: parsed } = parseArgs({ options: parseOptions })
  // Every flag is one of the table's (parseArgs refuses others); read back by its kind.
  const text = (name: string): string | undefined => {
    const value = parsed[name]
    return typeof value === 'string' ? value : undefined
  }
  const values = {
    port: text('port'),
    host: text('host'),
    'delta-ms': text('delta-ms'),
    'snapshot-ms': text('snapshot-ms'),
    mains: text('mains'),
    store: text('store'),
    bus: text('bus'),
    'main-id': text('main-id'),
    'lease-ms': text('lease-ms'),
    cors: text('cors'),
    'allowed-host': (parsed['allowed-host'] as string[] | undefined) ?? undefined,
    flavor: text('flavor'),
    'push-backend': text('push-backend'),
    help: parsed.help === true,
  }
  if (values.help) {
    console.log(usage)
    return
  }
  const port = numberOption(values.port, 'port', Number(defaultOf('port')))
  const host = values.host ?? defaultOf('host')
  const deltaMs = numberOption(values['delta-ms'], 'delta-ms', Number(defaultOf('delta-ms')))
  const snapshotMs = numberOption(
    values['snapshot-ms'],
    'snapshot-ms',
    Number(defaultOf('snapshot-ms')),
  )
  const mains = Math.max(1, numberOption(values.mains, 'mains', Number(defaultOf('mains'))))
  const leaseMs = numberOption(values['lease-ms'], 'lease-ms', Number(defaultOf('lease-ms')))
  if (leaseMs === 0) exitWith('--lease-ms must be more than 0.')
  if (mains > 1 && (values.store !== undefined || values.bus !== undefined)) {
    exitWith(
      '--mains simulates several mains in one process, on memory: drop it with --store or --bus (start one process per instance instead).',
    )
  }
  if (values['main-id'] !== undefined && mains > 1)
    exitWith('--main-id names one main: drop --mains.')
  const cors = corsOption(values.cors)
  const allowedHosts = allowedHostsOption(values['allowed-host'])
  const flavor = choice<FlavorName>(values.flavor, 'flavor', flavorNames)
  const pushBackend = choice<PushBackend>(values['push-backend'], 'push-backend', pushBackends)
  if (pushBackend !== undefined && flavor !== 'n8n-2.41') {
    console.error(`--push-backend goes with --flavor n8n-2.41 only.\n${usage}`)
    process.exit(2)
  }

  // With --store/--bus, this process is one instance of a deployment. Otherwise several mains in
  // this one process (a simulation of a deployment's mains, for tests) share one memory store and
  // one in-process bus, which relays Stops between them, on consecutive ports.
  const deployment = await openDeployment(values.store, values.bus)
  const store = deployment.store ?? createMemoryStore()
  const bus = deployment.bus ?? createMemoryBus()
  const servers: PreviewChatServer[] = []
  for (let index = 0; index < mains; index++) {
    const backend = createPreviewChatBackend({
      dev: true,
      store,
      bus,
      deltaMs,
      snapshotMs,
      mainId: values['main-id'] ?? `main-${index + 1}`,
      ...(deployment.store && { leaseMs }),
      logger: consoleLogger,
      cors,
      allowedHosts,
      ...(flavor !== undefined && { flavor }),
      ...(pushBackend !== undefined && { pushBackend }),
    })
    const server = await startPreviewChatServer({
      dev: true,
      backend,
      host,
      port: port === 0 ? 0 : port + index,
      onError: (error) => console.error(error),
    })
    servers.push(server)
    const emulating =
      backend.flavor === 'n8n-2.41'
        ? ` (emulating n8n 2.41, push over ${pushBackend ?? 'sse'})`
        : backend.flavor === 'next-era'
          ? " (the platform's unreleased queue protocol)"
          : ''
    console.log(`listening on ${server.url}${emulating}`)
  }

  let closing = false
  const shutdown = () => {
    if (closing) return
    closing = true
    Promise.all(
      servers.map(async (server) => {
        // No new turns; running ones get 10 s, then end as `error` (never left `running`).
        await server.backend.shutdown({ graceMs: 10_000 })
        await server.close()
        await server.backend.close()
      }),
    )
      .then(() => deployment.close())
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        console.error(error)
        process.exit(1)
      })
  }
  process.on('SIGINT', shutdown)
  process.on('SIGTERM', shutdown)
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
