import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import type { ServerPushMessage } from '@preview-chat/core/contract'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { sharedTestRedis } from '../../../../scripts/services/redis.mjs'
import { createRedisBus, RedisBusError, type RedisBus } from '../redis'

// The bus between real processes: two Node processes, each one instance with its own main, and
// this test's own instance, on one redis-server. A process is killed with SIGKILL (no goodbye).
let redis: Awaited<ReturnType<typeof sharedTestRedis>>
beforeAll(async () => {
  redis = await sharedTestRedis()
}, 180_000) // long enough for a first run that installs redis-server
afterAll(() => redis.stop())

const busModule = fileURLToPath(new URL('../redis/index.ts', import.meta.url))
/** One instance in its own process: it reports, one JSON line each, what it hears and cancels. */
const instanceScript = `
const [url, channelPrefix, mainId] = process.argv.slice(1)
const { createRedisBus } = await import(${JSON.stringify(busModule)})
const bus = await createRedisBus({ url, channelPrefix })
const running = new Set(['e-running'])
const say = (line) => process.stdout.write(JSON.stringify(line) + '\\n')
bus.register(mainId, (executionId) => {
  const accepted = running.delete(executionId)
  say({ cancelled: executionId, accepted })
  return accepted
})
bus.subscribe('alice', (message) => say({ heard: message.data.executionId }))
process.stdin.setEncoding('utf8').on('data', (text) => {
  for (const executionId of text.split('\\n').filter(Boolean)) {
    const data = { projectId: 'p', agentId: 'a', threadId: 't', executionId }
    bus.publish('alice', { type: 'agentExecutionUpdated', data }).catch((error) => say({ error: error.code }))
  }
})
say({ ready: mainId })
`

interface Instance {
  child: ChildProcess
  lines: Record<string, unknown>[]
}
const children: ChildProcess[] = []
let channelPrefix = ''

async function startInstance(mainId: string): Promise<Instance> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--conditions=@preview-chat/source',
      '--input-type=module',
      '-e',
      instanceScript,
      redis.url,
      channelPrefix,
      mainId,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  )
  children.push(child)
  const lines: Record<string, unknown>[] = []
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(JSON.parse(line)))
  await eventually(() => expect(lines).toContainEqual({ ready: mainId }))
  return { child, lines }
}

const eventually = (check: () => unknown | Promise<unknown>) =>
  vi.waitFor(check, { timeout: 20_000, interval: 20 })
const update = (executionId: string): ServerPushMessage => ({
  type: 'agentExecutionUpdated',
  data: { projectId: 'p', agentId: 'a', threadId: 't', executionId },
})
let own: RedisBus | undefined
let prefixes = 0
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
  await own?.close()
})

describe('the Redis bus between processes [R-BUS-REDIS-DEAD-OWNER]', () => {
  it('push and Stop cross processes; a killed owner is answered false, not waited for forever', async () => {
    channelPrefix = `processes-${process.pid}-${++prefixes}:`
    const [one, two] = await Promise.all([startInstance('main-1'), startInstance('main-2')])
    own = await createRedisBus({ url: redis.url, channelPrefix, replyTimeoutMs: 2000 })
    const heard: string[] = []
    own.subscribe('alice', (message) => {
      if (message.type === 'agentExecutionUpdated') heard.push(message.data.executionId)
    })

    await own.publish('alice', update('from-test'))
    // An instance hears its own publish at once and the others' through Redis: the bus orders
    // messages from one origin, not across origins. Two publishes once it has heard the test's
    // message, so every instance hears them in this order (CI once saw two hear its own first).
    await eventually(() => expect(two!.lines).toContainEqual({ heard: 'from-test' }))
    two!.child.stdin!.write('from-two\n')
    for (const instance of [one!, two!]) {
      await eventually(() =>
        expect(instance.lines.filter((line) => 'heard' in line)).toEqual([
          { heard: 'from-test' },
          { heard: 'from-two' },
        ]),
      )
    }
    await eventually(() => expect(heard).toEqual(['from-test', 'from-two']))

    expect(await own.cancel('main-1', 'e-running')).toBe(true)
    expect(await own.cancel('main-1', 'e-running')).toBe(false)
    expect(one!.lines).toContainEqual({ cancelled: 'e-running', accepted: true })
    expect(two!.lines.filter((line) => 'cancelled' in line)).toEqual([])

    // The owner dies without a word: once Redis has seen its connections close, a Stop for its
    // main is answered false by the instances left (none has that main).
    one!.child.kill('SIGKILL')
    const before: unknown[] = []
    await eventually(async () => {
      const answer = await own!.cancel('main-1', 'e-running').catch((error: unknown) => error)
      if (answer !== false) before.push(answer)
      expect(answer).toBe(false)
    })
    // Until then, only a typed, retryable error (a Stop nobody answered), never an acceptance.
    for (const answer of before) {
      expect(answer).toBeInstanceOf(RedisBusError)
      expect((answer as RedisBusError).retryable).toBe(true)
    }
    expect(await own.cancel('main-2', 'e-running')).toBe(true)
  })
})
