import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assistantText,
  at,
  eventually,
  pushAt,
  startDeployment,
  type Deployment,
} from './deploy-harness'
import { authHeaders, chat, chatPath, del, readHistory, stopPath, turn } from './harness'

// Two server processes on one real Postgres and one real Redis, each restarted under a running
// turn. Leases of 3 × 1 s: a restart of a few seconds may outlast one, which the tests allow.
let deployment: Deployment
beforeAll(async () => {
  deployment = await startDeployment({ instances: 2, leaseMs: 1000 })
}, 240_000)
afterAll(() => deployment?.stop(), 60_000)

let threads = 0
const newThread = () => `fault-${++threads}-${Math.random().toString(36).slice(2, 8)}`

async function startLong(url: string, count: number) {
  const threadId = newThread()
  const stream = await turn(
    chat(at(url), { message: `/long ${count}`, sessionId: threadId, newSession: true }),
  )
  const started = await stream.until('execution-started')
  return { threadId, executionId: started.executionId, stream }
}

/** The thread's messages of `executionId`, by role. */
async function turnMessages(url: string, threadId: string, executionId: string) {
  const snapshot = await readHistory(at(url), threadId)
  const of = snapshot.messages.filter((message) => message.executionId === executionId)
  return { snapshot, of }
}

describe('a deployment whose Redis or Postgres restarts', () => {
  it('Redis restarted mid-turn: Stop answers a typed retryable 503 while it is down, then push and Stop work again; nothing lost or doubled [R-DEPLOY-REDIS-RESTART]', async () => {
    const [owner, other] = deployment.instances
    const { threadId, executionId, stream } = await startLong(owner!.url, 100_000)
    await deployment.redis.down()
    const refused = await fetch(`${other!.url}${stopPath(threadId, executionId)}`, {
      method: 'DELETE',
      headers: authHeaders('alice'),
    })
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(((await refused.json()) as { code: string }).code).toMatch(
      /^(bus_unavailable|relay_timeout)$/,
    )
    // The turn goes on while its pushes fail: it is still recorded as it runs.
    const during = assistantText((await turnMessages(other!.url, threadId, executionId)).snapshot)
    await eventually(async () => {
      const now = await turnMessages(other!.url, threadId, executionId)
      expect(assistantText(now.snapshot).length).toBeGreaterThan(during.length)
    })
    await deployment.redis.up()
    // Push across instances again: a tab on `other` hears the owner's recordings.
    const push = await pushAt(other!.url)
    await eventually(() => expect(push.heard(executionId)).toBeGreaterThan(0))
    // Stop relayed again once the bus is back (a retry of the refused Stop).
    await eventually(async () => {
      const answer = await del(at(other!.url), stopPath(threadId, executionId))
      expect(answer).toEqual({ status: 200, body: { data: { cancelRequested: true } } })
    })
    await stream.rest()
    await eventually(async () => {
      const { snapshot, of } = await turnMessages(other!.url, threadId, executionId)
      expect(snapshot.activeExecutionId).toBeNull()
      expect(of.map((message) => [message.role, message.executionStatus])).toEqual([
        ['user', 'cancelled'],
        ['assistant', 'cancelled'],
      ])
      expect(snapshot.messages).toHaveLength(2)
    })
    push.close()
  })

  it('Postgres restarted: requests answer a typed 503 with Retry-After, then recover; no turn stays running [R-DEPLOY-PG-RESTART]', async () => {
    const [owner, other] = deployment.instances
    const { threadId, executionId, stream } = await startLong(owner!.url, 300)
    await eventually(async () => {
      const text = assistantText(await readHistory(at(other!.url), threadId))
      expect(text.length).toBeGreaterThan(0)
    })
    await deployment.postgres.down()
    for (const instance of [owner!, other!]) {
      const read = await fetch(`${instance.url}${chatPath}/${threadId}/messages`, {
        headers: authHeaders('alice'),
      })
      expect(read.status).toBe(503)
      expect(read.headers.get('retry-after')).toMatch(/^\d+$/)
      expect(await read.json()).toMatchObject({ code: 'store_unavailable' })
      const post = await chat(at(instance.url), {
        message: 'hi',
        sessionId: newThread(),
        newSession: true,
      })
      expect(post.status).toBe(503)
      expect(await post.json()).toMatchObject({ code: 'store_unavailable' })
    }
    await deployment.postgres.up()
    // The turn ends (as it ran on, or as lost if its lease lapsed meanwhile), never running for good.
    await stream.rest()
    await eventually(async () => {
      const { snapshot, of } = await turnMessages(other!.url, threadId, executionId)
      expect(snapshot.activeExecutionId).toBeNull()
      expect(of).toHaveLength(2)
      for (const message of of) expect(message.executionStatus).not.toBe('running')
    })
    // And the deployment admits turns again, wherever a request lands.
    const next = await turn(
      chat(at(deployment.proxy.url), { message: 'again', sessionId: threadId }),
    )
    expect((await next.rest()).at(-1)?.type).toBe('done')
  })

  it('a turn started while Redis is down runs to its end, its pushes lost but its record whole [R-DEPLOY-REDIS-RESTART]', async () => {
    const [owner, other] = deployment.instances
    await deployment.redis.down()
    try {
      const threadId = newThread()
      const stream = await turn(
        chat(at(owner!.url), { message: '/long 10', sessionId: threadId, newSession: true }),
      )
      expect((await stream.rest()).at(-1)?.type).toBe('done')
      const snapshot = await readHistory(at(other!.url), threadId)
      expect(snapshot.activeExecutionId).toBeNull()
      expect(snapshot.messages.map((message) => message.executionStatus)).toEqual([
        'success',
        'success',
      ])
    } finally {
      await deployment.redis.up()
    }
  })

  it('a turn that ends while Postgres is down is recorded once it is back, never left running [R-DEPLOY-PG-RESTART]', async () => {
    const [owner, other] = deployment.instances
    const { threadId, executionId, stream } = await startLong(owner!.url, 40)
    await deployment.postgres.down()
    try {
      // The turn streams on without its store: its last delta comes while Postgres is down.
      for (;;) {
        const event = await stream.next()
        if (event === undefined) throw new Error('the turn ended while Postgres was down')
        if (event.type === 'text-delta' && event.delta.includes('delta 40.')) break
      }
    } finally {
      await deployment.postgres.up()
    }
    expect((await stream.rest()).at(-1)?.type).toBe('done')
    await eventually(async () => {
      const { snapshot, of } = await turnMessages(other!.url, threadId, executionId)
      expect(snapshot.activeExecutionId).toBeNull()
      for (const message of of) expect(message.executionStatus).not.toBe('running')
    })
  })
})
