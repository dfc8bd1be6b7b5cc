import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { referenceScript, runConformance } from '../conformance/index'
import {
  assistantText,
  at,
  eventually,
  pushAt,
  startDeployment,
  type Deployment,
} from './deploy-harness'
import { chat, del, readHistory, stopPath, turn } from './harness'

// Three server processes (three mains) on one real Postgres and one real Redis, a round-robin
// proxy in front: what a deployment behind a load balancer without affinity meets.
let deployment: Deployment
beforeAll(async () => {
  deployment = await startDeployment({ instances: 3, leaseMs: 300 })
}, 240_000) // a first run installs postgresql and redis-server
afterAll(() => deployment?.stop(), 60_000)

let threads = 0
const newThread = () => `deploy-${++threads}-${Math.random().toString(36).slice(2, 8)}`
const longText = (count: number) =>
  Array.from({ length: count }, (_, index) => `delta ${index + 1}. `).join('')

/** Starts `/long count` at `url` in a new thread; resolves once it started there. */
async function startLong(url: string, count: number) {
  const threadId = newThread()
  const stream = await turn(
    chat(at(url), { message: `/long ${count}`, sessionId: threadId, newSession: true }),
  )
  const started = await stream.until('execution-started')
  return { threadId, executionId: started.executionId, stream }
}

describe('a deployment of real processes', () => {
  it('a read on another instance mid-answer shows the answer so far and follows it to its end [R-DEPLOY-READ-ANYWHERE]', async () => {
    const [owner, reader] = deployment.instances
    const push = await pushAt(reader!.url)
    const { threadId, executionId } = await startLong(owner!.url, 150)
    // Mid-answer, read where the turn does not run: part of the text, the turn still active.
    const partial = await eventually(async () => {
      const snapshot = await readHistory(at(reader!.url), threadId)
      expect(snapshot.activeExecutionId).toBe(executionId)
      expect(assistantText(snapshot).length).toBeGreaterThan(0)
      return assistantText(snapshot)
    })
    expect(longText(150).startsWith(partial)).toBe(true)
    expect(partial).not.toBe(longText(150))
    // Followed on that instance: its push hears the owner's recordings, and a read after them
    // shows the end.
    await eventually(() => expect(push.heard(executionId)).toBeGreaterThan(1))
    await eventually(async () => {
      const snapshot = await readHistory(at(reader!.url), threadId)
      expect(snapshot.activeExecutionId).toBeNull()
      expect(assistantText(snapshot)).toBe(longText(150))
    })
    push.close()
  })

  it('a Stop sent to an instance that does not run the turn cancels it on its owner [R-DEPLOY-STOP-RELAYED]', async () => {
    const [owner, other] = deployment.instances
    const { threadId, executionId, stream } = await startLong(owner!.url, 5000)
    const answer = await del(at(other!.url), stopPath(threadId, executionId))
    expect(answer).toEqual({ status: 200, body: { data: { cancelRequested: true } } })
    // Completion comes from the record, read on a third instance.
    await eventually(async () => {
      const snapshot = await readHistory(at(deployment.instances[2]!.url), threadId)
      expect(snapshot.activeExecutionId).toBeNull()
      const assistant = snapshot.messages.find((message) => message.role === 'assistant')
      expect(assistant?.executionStatus).toBe('cancelled')
    })
    await stream.rest()
  })

  it('two POSTs for one thread at two instances at once: one turn, one turn_already_running [R-DEPLOY-ONE-TURN]', async () => {
    const [first, second] = deployment.instances
    for (let round = 0; round < 4; round++) {
      const threadId = newThread()
      await turn(
        chat(at(first!.url), { message: 'hello', sessionId: threadId, newSession: true }),
      ).then((stream) => stream.rest())
      const body = { message: '/long 200', sessionId: threadId }
      const streams = await Promise.all([
        turn(chat(at(first!.url), body)),
        turn(chat(at(second!.url), body)),
      ])
      const firsts = await Promise.all(streams.map((stream) => stream.next()))
      const kinds = firsts.map((event) => (event?.type === 'error' ? event.errorCode : event?.type))
      expect(kinds.sort()).toEqual(['execution-started', 'turn_already_running'])
      const started = streams[kinds.indexOf('execution-started')]!
      await del(
        at(first!.url),
        stopPath(
          threadId,
          (firsts.find((e) => e?.type === 'execution-started') as { executionId: string })
            .executionId,
        ),
      )
      await started.rest()
      const snapshot = await readHistory(at(second!.url), threadId)
      expect(snapshot.messages.filter((message) => message.role === 'user')).toHaveLength(2)
    }
  })

  it('the conformance suite passes against the deployment, through the round-robin proxy [R-DEPLOY-CONFORMANCE]', async () => {
    const bearer = (user: string) => ({ Authorization: `Bearer ${user}` })
    const report = await runConformance({
      baseUrl: `${deployment.proxy.url}/rest`,
      credentials: { owner: bearer('alice'), other: bearer('bob'), readOnly: bearer('carol') },
      script: referenceScript,
    })
    expect(report.results.filter((result) => result.outcome !== 'pass')).toEqual([])
    expect(report.ok).toBe(true)
  }, 180_000)

  it('kill -9 of the owner mid-turn: the turn ends as error, its text kept, the gate reopens [R-DEPLOY-INSTANCE-LOST]', async () => {
    const victim = deployment.instances[2]!
    const survivor = deployment.instances[0]!
    const push = await pushAt(survivor.url)
    const { threadId, executionId } = await startLong(victim.url, 5000)
    const before = await eventually(async () => {
      const text = assistantText(await readHistory(at(survivor.url), threadId))
      expect(text.length).toBeGreaterThan(20)
      return text
    })
    const exited = new Promise((resolve) => victim.child.once('exit', resolve))
    deployment.kill(victim)
    await exited
    const heardBefore = push.heard(executionId)
    const ended = await eventually(async () => {
      const snapshot = await readHistory(at(survivor.url), threadId)
      expect(snapshot.activeExecutionId).toBeNull()
      return snapshot
    })
    const assistant = ended.messages.find(
      (message) => message.executionId === executionId && message.role === 'assistant',
    )
    expect(assistant?.executionStatus).toBe('error')
    expect(assistantText(ended).startsWith(before)).toBe(true)
    // Every tab hears it (the survivor's push), and a new message runs on a live instance.
    await eventually(() => expect(push.heard(executionId)).toBeGreaterThan(heardBefore))
    const next = await turn(
      chat(at(deployment.proxy.url), { message: 'again', sessionId: threadId }),
    )
    const events = await next.rest()
    expect(events.at(-1)?.type).toBe('done')
    push.close()
  })
})
