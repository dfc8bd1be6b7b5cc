/**
 * `pnpm --filter @preview-chat/server bench:scale [--turns 200] [--deltas 100] [--reads 200]
 * [--stops 40]`
 *
 * The scale row of issue 45, over loopback only, on real processes (`cli.ts`): the memory store in
 * one process, then one and two instances on one Postgres and one Redis (scripts/services). For
 * each: deltas per second of `turns` concurrent turns of `deltas` deltas each (spread over the
 * instances), history read p50/p99 of a thread of 200 and of 2,000 messages (`reads` reads each,
 * spread over the instances), and Stop-to-recorded-end p50/p99 (a Stop's request sent until the
 * turn's stream ends, which it does only once the end is recorded): local (sent to the owner) and,
 * with two instances, relayed (sent to the other). Bounded: a fixed count of everything, each
 * setup's processes stopped before the next. It measures; it asserts nothing, and no test runs it.
 */
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { startPostgres } from '../../../scripts/services/postgres.mjs'
import { startRedis } from '../../../scripts/services/redis.mjs'
import { endInstance, startInstance, type Instance } from '../src/__tests__/deploy-processes'

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '200' },
    deltas: { type: 'string', default: '100' },
    reads: { type: 'string', default: '200' },
    stops: { type: 'string', default: '40' },
  },
})
const turns = Number(values.turns)
const deltas = Number(values.deltas)
const reads = Number(values.reads)
const stops = Number(values.stops)

const chatPath = '/rest/projects/scale/agents/v2/agent/chat'
const users = ['alice', 'bob']
const headers = (user: string) => ({
  Authorization: `Bearer ${user}`,
  'Content-Type': 'application/json',
})
// Deltas paced at 0 ms: the row measures what the deployment carries, not the agent's pace.
const timing = { deltaMs: 0, snapshotMs: 250, leaseMs: 2000 }
let threadCount = 0
const newThread = () => `scale-${process.pid}-${++threadCount}`

/** Posts one turn and reads its stream to the end; resolves to the count of data events. */
async function runTurn(url: string, user: string, threadId: string, message: string, fresh = true) {
  const response = await fetch(`${url}${chatPath}`, {
    method: 'POST',
    headers: headers(user),
    body: JSON.stringify({ message, sessionId: threadId, ...(fresh && { newSession: true }) }),
  })
  if (response.status !== 200) throw new Error(`turn answered ${response.status}`)
  const text = await response.text()
  if (!text.includes('"type":"done"'))
    throw new Error(`turn did not end with done: ${text.slice(-200)}`)
  return text.split('"type":"text-delta"').length - 1
}

/** `list[index]`, which must be there. */
function pick<T>(list: readonly T[], index: number): T {
  const value = list[index]
  if (value === undefined) throw new Error(`nothing at ${index}`)
  return value
}

function percentile(sorted: number[], p: number): number {
  return pick(sorted, Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length)))
}
const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return { p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)) }
}
const round = (value: number) => Math.round(value * 10) / 10

/** `turns` turns at once, round-robin over the instances: deltas received per second. */
async function concurrentTurns(urls: string[]) {
  const start = performance.now()
  const counts = await Promise.all(
    Array.from({ length: turns }, (_, index) =>
      runTurn(
        pick(urls, index % urls.length),
        pick(users, index % users.length),
        newThread(),
        `/long ${deltas}`,
      ),
    ),
  )
  const seconds = (performance.now() - start) / 1000
  const received = counts.reduce((sum, count) => sum + count, 0)
  return { deltasPerSecond: Math.round(received / seconds), received, seconds: round(seconds) }
}

/** A thread of `messages` messages (one short turn per two), built turn after turn. */
async function seedThread(url: string, messages: number) {
  const threadId = newThread()
  for (let turn = 0; turn < messages / 2; turn++) {
    await runTurn(url, 'alice', threadId, '/long 1', turn === 0)
  }
  return threadId
}

/** `reads` history reads of `threadId`, four at a time, round-robin: p50/p99 in ms. */
async function historyReads(urls: string[], threadId: string) {
  const samples: number[] = []
  let next = 0
  const reader = async () => {
    while (next < reads) {
      const url = pick(urls, next++ % urls.length)
      const start = performance.now()
      const response = await fetch(`${url}${chatPath}/${threadId}/messages`, {
        headers: headers('alice'),
      })
      const body = (await response.json()) as { data?: { messages?: unknown[] } }
      samples.push(performance.now() - start)
      if (response.status !== 200 || !body.data?.messages)
        throw new Error(`read answered ${response.status}`)
    }
  }
  await Promise.all([reader(), reader(), reader(), reader()])
  return summary(samples)
}

/** `stops` turns started at `owner`, each stopped at `stopAt`: Stop sent → stream ended, in ms. */
async function stopToEnd(owner: string, stopAt: string) {
  const samples: number[] = []
  for (let index = 0; index < stops; index++) {
    const threadId = newThread()
    const response = await fetch(`${owner}${chatPath}`, {
      method: 'POST',
      headers: headers('bob'),
      body: JSON.stringify({ message: '/long 100000', sessionId: threadId, newSession: true }),
    })
    if (!response.body) throw new Error(`turn answered ${response.status} with no body`)
    const reader = response.body.getReader()
    const decoder = new TextDecoder()
    let text = ''
    let executionId: string | undefined
    while (!executionId) {
      const { value, done } = await reader.read()
      if (done) throw new Error('turn ended before it started')
      text += decoder.decode(value, { stream: true })
      executionId = /"type":"execution-started","executionId":"([^"]+)"/.exec(text)?.[1]
    }
    const start = performance.now()
    const stop = await fetch(`${stopAt}${chatPath}/${threadId}/executions/${executionId}`, {
      method: 'DELETE',
      headers: headers('bob'),
    })
    const answer = (await stop.json()) as { data?: { cancelRequested?: boolean } }
    if (answer.data?.cancelRequested !== true)
      throw new Error(`Stop answered ${JSON.stringify(answer)}`)
    while (!(await reader.read()).done);
    samples.push(performance.now() - start)
  }
  return summary(samples)
}

type Spread = ReturnType<typeof summary>

interface Row {
  setup: string
  turns: Awaited<ReturnType<typeof concurrentTurns>>
  read200: Spread
  read2000: Spread
  stopLocal: Spread
  stopRelayed?: Spread
}

async function measure(setup: string, instances: Instance[]): Promise<Row> {
  const urls = instances.map((instance) => instance.url)
  const turnsRow = await concurrentTurns(urls)
  const small = await seedThread(pick(urls, 0), 200)
  const large = await seedThread(pick(urls, 0), 2000)
  const row: Row = {
    setup,
    turns: turnsRow,
    read200: await historyReads(urls, small),
    read2000: await historyReads(urls, large),
    stopLocal: await stopToEnd(pick(urls, 0), pick(urls, 0)),
    ...(urls.length > 1 && { stopRelayed: await stopToEnd(pick(urls, 0), pick(urls, 1)) }),
  }
  console.log(JSON.stringify(row))
  return row
}

async function main() {
  console.log(
    `load before: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  )
  const rows: Row[] = []
  const memory = await startInstance('memory', undefined, undefined, timing)
  try {
    rows.push(await measure('memory, 1 process', [memory]))
  } finally {
    await endInstance(memory)
  }
  for (const count of [1, 2]) {
    const postgres = await startPostgres()
    const redis = await startRedis()
    const instances: Instance[] = []
    try {
      for (let index = 1; index <= count; index++) {
        instances.push(await startInstance(`main-${index}`, postgres.url, redis.url, timing))
      }
      rows.push(
        await measure(`Postgres + Redis, ${count} instance${count > 1 ? 's' : ''}`, instances),
      )
    } finally {
      await Promise.all(instances.map(endInstance))
      await redis.stop()
      await postgres.stop()
    }
  }
  console.log(
    `load after: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  )
  console.log(
    '\n| setup | deltas/s | read p50/p99 (200 msgs) | read p50/p99 (2,000 msgs) | 2,000 ÷ 200 (p50) | Stop→end local p50/p99 | Stop→end relayed p50/p99 |',
  )
  console.log('| --- | --- | --- | --- | --- | --- | --- |')
  for (const row of rows) {
    const pair = (value?: Spread) => (value ? `${value.p50} / ${value.p99} ms` : '—')
    console.log(
      `| ${row.setup} | ${row.turns.deltasPerSecond} | ${pair(row.read200)} | ${pair(row.read2000)} | ${round(row.read2000.p50 / row.read200.p50)} | ${pair(row.stopLocal)} | ${pair(row.stopRelayed)} |`,
    )
  }
}

await main()
