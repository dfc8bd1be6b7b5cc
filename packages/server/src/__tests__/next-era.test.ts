/**
 * The next-era flavor's contract (`shared/interop/next-era.md`, "The queue in detail"), over real
 * HTTP: acceptance by `message-queued`, `execution-started.inputMessageIds`, each queue route and
 * each of its 409s, steering, the queue push and `messageId` dedupe. Time is the gate's: a turn
 * waits at its pauses until the test steps it.
 */
import {
  capabilitiesHeader,
  parseCapabilities,
  parseMessageQueue,
  parseQueueItem,
  recordedMessageId,
  type MessageQueue,
} from '@preview-chat/core/contract'
import { afterEach, describe, expect, it } from 'vitest'
import type { PreviewChatServer } from '../node/host'
import {
  closeHosts,
  collectUnhandled,
  createGate,
  del,
  readHistory,
  stopPath,
  waitFor,
} from './harness'
import { call, openQueuePush, queueChat, queuePath, startQueueHost } from './next-era-harness'

const unhandled = collectUnhandled()
afterEach(closeHosts)

const thread = 't-queue'
const newThread = { sessionId: thread, newSession: true } as const

async function readQueue(server: PreviewChatServer, threadId = thread, user = 'alice') {
  const answer = await call(server, 'GET', queuePath(threadId), undefined, user)
  expect(answer.status).toBe(200)
  const parsed = parseMessageQueue(answer.body)
  if (!parsed.success) throw parsed.error
  return parsed.value
}

const ids = (queue: MessageQueue) => queue.items.map((item) => item.id)

/** A host whose turns wait at their pauses, and a first turn running in `thread`. */
async function busyThread() {
  const gate = createGate()
  const server = await startQueueHost({ sleep: gate.sleep, snapshotMs: 60_000 })
  const first = await queueChat(server, { message: '/long 3', ...newThread })
  const started = await first.until('execution-started')
  await waitFor(() => gate.paused > 0, 'the first turn to pause')
  return { gate, server, first, running: started.executionId }
}

describe('a message is accepted by message-queued, and taken up when the thread is free [R-QUEUE-ACCEPT]', () => {
  it('on a free thread: message-queued, then execution-started with the messageId in inputMessageIds, on one stream [R-QUEUE-INPUT-IDS]', async () => {
    const server = await startQueueHost()
    const messageId = crypto.randomUUID()
    const stream = await queueChat(server, { message: 'hello', ...newThread, messageId })
    expect(parseCapabilities(stream.response.headers.get(capabilitiesHeader))).toEqual({
      dedupesMessages: true,
      queuesMessages: true,
    })
    const events = await stream.rest()
    expect(events.slice(0, 2)).toEqual([
      { type: 'message-queued', queueId: expect.stringMatching(/^[1-9]\d*$/), sessionId: thread },
      {
        type: 'execution-started',
        executionId: expect.any(String),
        sessionId: thread,
        inputMessageIds: [messageId],
      },
    ])
    expect(events.at(-1)?.type).toBe('done')
    const history = await readHistory(server, thread)
    expect(history.messages[0]).toMatchObject({ role: 'user', messageId })
    expect((await readQueue(server)).items).toEqual([])
  })

  it('without a messageId, inputMessageIds names the message the record keeps [R-QUEUE-INPUT-IDS]', async () => {
    const server = await startQueueHost()
    const stream = await queueChat(server, { message: 'hello', ...newThread })
    const started = await stream.until('execution-started')
    expect(started.inputMessageIds).toEqual([recordedMessageId(started.executionId, 'user')])
    await stream.rest()
  })

  it('while a turn runs: queued, not in the transcript, then started on its own stream once the turn ends [R-QUEUE-WHILE-BUSY]', async () => {
    const { gate, server, first, running } = await busyThread()
    const messageId = crypto.randomUUID()
    const second = await queueChat(server, { message: 'next one', sessionId: thread, messageId })
    const queued = await second.until('message-queued')

    const queue = await readQueue(server)
    expect(queue).toEqual({
      steerableExecutionId: running,
      items: [
        {
          id: queued.queueId,
          message: 'next one',
          attachments: [],
          steeringExecutionId: null,
          createdAt: expect.any(String),
        },
      ],
    })
    const during = await readHistory(server, thread)
    expect(during.messages.map((message) => message.executionId)).toEqual([running, running])

    gate.open()
    expect((await first.rest()).at(-1)?.type).toBe('done')
    const started = await second.until('execution-started')
    expect(started.inputMessageIds).toEqual([messageId])
    expect(started.executionId).not.toBe(running)
    await second.rest()
    const after = await readHistory(server, thread)
    expect(after.messages.filter((message) => message.role === 'user')).toEqual([
      expect.objectContaining({ executionId: running }),
      expect.objectContaining({ executionId: started.executionId, messageId }),
    ])
    expect((await readQueue(server)).items).toEqual([])
  })

  it('Stop leaves the pending items in place; the next starts once the cancel settles [R-QUEUE-STOP]', async () => {
    const { server, running } = await busyThread()
    const second = await queueChat(server, { message: 'after stop', sessionId: thread })
    await second.until('message-queued')
    const stop = await del(server, stopPath(thread, running))
    expect(stop.body).toEqual({ data: { cancelRequested: true } })
    const started = await second.until('execution-started')
    expect(started.executionId).not.toBe(running)
    const history = await readHistory(server, thread)
    expect(history.messages.find((message) => message.executionId === running)).toMatchObject({
      executionStatus: 'cancelled',
    })
  })

  it('a queued message waits for an open approval checkpoint, and starts once it is cancelled [R-QUEUE-WAITS-CHECKPOINT]', async () => {
    const server = await startQueueHost()
    const suspended = await queueChat(server, { message: '/suspend', ...newThread })
    const { payload } = await suspended.until('tool-call-suspended')
    const second = await queueChat(server, { message: 'after approval', sessionId: thread })
    await second.until('message-queued')
    expect((await readQueue(server)).items.map((item) => item.message)).toEqual(['after approval'])
    const cancel = await del(server, `/rest/projects/p1/agents/v2/a1/chat/runs/${payload.runId}`)
    expect(cancel.body).toEqual({ data: { cancelled: true } })
    await second.until('execution-started')
    expect((await second.rest()).at(-1)?.type).toBe('done')
  })
})

describe('a main that closes takes up nothing more [R-QUEUE-CLOSE]', () => {
  it('the running turn ends interrupted and the queued item stays pending, with no execution', async () => {
    const { server } = await busyThread()
    const second = await queueChat(server, { message: 'waits', sessionId: thread })
    const { queueId } = await second.until('message-queued')
    const { backend } = server
    await backend.close()
    expect((await backend.store.listExecutions()).map((execution) => execution.status)).toEqual([
      'interrupted',
    ])
    const items = await backend.store.readQueue({
      ownerId: 'alice',
      projectId: 'p1',
      agentId: 'a1',
      threadId: thread,
    })
    expect(items.map((item) => [item.id, item.state])).toEqual([
      ['1', 'started'],
      [queueId, 'pending'],
    ])
  })
})

describe('the queue resource and its routes [R-QUEUE-ROUTES]', () => {
  it('GET …/queue of a thread not created yet (or another user’s) is empty [R-QUEUE-READ]', async () => {
    const { server } = await busyThread()
    await queueChat(server, { message: 'mine', sessionId: thread })
    const empty = { items: [], steerableExecutionId: null }
    expect(await readQueue(server, 'no-such-thread')).toEqual(empty)
    expect(await readQueue(server, thread, 'bob')).toEqual(empty)
    expect((await readQueue(server)).items).toHaveLength(1)
  })

  it('PATCH edits a pending item’s text, which is what its turn runs; blank is 400, unknown 404, a bad id 400 [R-QUEUE-EDIT]', async () => {
    const { gate, server } = await busyThread()
    const second = await queueChat(server, { message: 'typo', sessionId: thread })
    const { queueId } = await second.until('message-queued')
    const edited = await call(server, 'PATCH', queuePath(thread, queueId), { message: 'fixed' })
    expect(edited.status).toBe(200)
    expect(parseQueueItem(edited.body)).toMatchObject({
      success: true,
      value: { message: 'fixed' },
    })
    expect((await call(server, 'PATCH', queuePath(thread, queueId), { message: ' ' })).status).toBe(
      400,
    )
    expect((await call(server, 'PATCH', queuePath(thread, '999'), { message: 'x' })).status).toBe(
      404,
    )
    expect((await call(server, 'PATCH', queuePath(thread, '01'), { message: 'x' })).status).toBe(
      400,
    )
    expect((await call(server, 'PATCH', queuePath('nope', queueId), { message: 'x' })).status).toBe(
      404,
    )
    gate.open()
    const started = await second.until('execution-started')
    await second.rest()
    const history = await readHistory(server, thread)
    expect(
      history.messages.find((message) => message.id === `${started.executionId}:user`),
    ).toMatchObject({ content: [{ type: 'text', text: 'fixed' }] })
  })

  it('PATCH and DELETE answer 409 once the item started [R-QUEUE-409-STARTED]', async () => {
    const { gate, server } = await busyThread()
    const second = await queueChat(server, { message: 'soon', sessionId: thread })
    const { queueId } = await second.until('message-queued')
    gate.open()
    await second.until('execution-started')
    const edit = await call(server, 'PATCH', queuePath(thread, queueId), { message: 'late' })
    expect(edit).toMatchObject({ status: 409, body: { code: 'queue_item_started' } })
    const removal = await call(server, 'DELETE', queuePath(thread, queueId))
    expect(removal).toMatchObject({ status: 409, body: { code: 'queue_item_started' } })
    await second.rest()
  })

  it('DELETE removes a pending item: {removed: true}, its POST ends in-band, and its messageId stays used [R-QUEUE-REMOVE]', async () => {
    const { server } = await busyThread()
    const messageId = crypto.randomUUID()
    const second = await queueChat(server, { message: 'never mind', sessionId: thread, messageId })
    const { queueId } = await second.until('message-queued')
    const removal = await call(server, 'DELETE', queuePath(thread, queueId))
    expect(removal).toEqual({ status: 200, body: { data: { removed: true } } })
    expect((await second.rest()).at(-1)).toEqual({
      type: 'error',
      message: 'The queued message was removed before it was taken up.',
      errorCode: 'queue_item_removed',
    })
    expect((await call(server, 'DELETE', queuePath(thread, queueId))).status).toBe(404)
    expect((await readQueue(server)).items).toEqual([])
    const again = await queueChat(server, { message: 'never mind', sessionId: thread, messageId })
    expect(await again.rest()).toEqual([{ type: 'done' }])
  })

  it('reorder moves an item to the target’s place when expectedQueueIds is the stored order [R-QUEUE-REORDER]', async () => {
    const { server } = await busyThread()
    const queued: string[] = []
    for (const message of ['a', 'b', 'c']) {
      const stream = await queueChat(server, { message, sessionId: thread })
      queued.push((await stream.until('message-queued')).queueId)
    }
    const [a, b, c] = queued as [string, string, string]
    const moved = await call(server, 'POST', queuePath(thread, c, 'reorder'), {
      targetQueueId: a,
      expectedQueueIds: [a, b, c],
    })
    expect(moved.status).toBe(200)
    const parsed = parseMessageQueue(moved.body)
    expect(parsed.success && ids(parsed.value)).toEqual([c, a, b])
    expect(ids(await readQueue(server))).toEqual([c, a, b])
    const down = await call(server, 'POST', queuePath(thread, c, 'reorder'), {
      targetQueueId: b,
      expectedQueueIds: [c, a, b],
    })
    expect(down.status).toBe(200)
    expect(ids(await readQueue(server))).toEqual([a, b, c])
  })

  it('reorder answers 409 "The queue has changed" for a stale expected order, and 400 for fewer than two ids [R-QUEUE-409-CHANGED]', async () => {
    const { server } = await busyThread()
    const queued: string[] = []
    for (const message of ['a', 'b']) {
      const stream = await queueChat(server, { message, sessionId: thread })
      queued.push((await stream.until('message-queued')).queueId)
    }
    const [a, b] = queued as [string, string]
    const stale = await call(server, 'POST', queuePath(thread, a, 'reorder'), {
      targetQueueId: b,
      expectedQueueIds: [b, a],
    })
    expect(stale).toMatchObject({
      status: 409,
      body: { code: 'queue_changed', message: 'The queue has changed. Refresh it and try again.' },
    })
    const short = await call(server, 'POST', queuePath(thread, a, 'reorder'), {
      targetQueueId: b,
      expectedQueueIds: [a],
    })
    expect(short.status).toBe(400)
    expect(ids(await readQueue(server))).toEqual([a, b])
  })
})

describe('steering a queued message into the running turn [R-QUEUE-STEER]', () => {
  it('reserves the item (listed first), then at the next pause message-steered goes on both streams and the record holds it', async () => {
    const { gate, server, first, running } = await busyThread()
    const plain = await queueChat(server, { message: 'waits', sessionId: thread })
    const waiting = (await plain.until('message-queued')).queueId
    const steered = await queueChat(server, { message: 'also this', sessionId: thread })
    const { queueId } = await steered.until('message-queued')

    const steer = await call(server, 'POST', queuePath(thread, queueId, 'steer'), {
      executionId: running,
    })
    expect(steer.status).toBe(200)
    expect(parseQueueItem(steer.body)).toMatchObject({
      success: true,
      value: { id: queueId, steeringExecutionId: running },
    })
    expect(ids(await readQueue(server))).toEqual([queueId, waiting])
    const edit = await call(server, 'PATCH', queuePath(thread, queueId), { message: 'x' })
    expect(edit).toMatchObject({ status: 409, body: { code: 'queue_item_steering' } })

    gate.step()
    const event = { type: 'message-steered', queueId, executionId: running, message: 'also this' }
    expect(await first.until('message-steered')).toEqual(event)
    expect(await steered.rest()).toEqual([
      { type: 'message-queued', queueId, sessionId: thread },
      event,
      { type: 'done', sessionId: thread, executionId: running },
    ])
    expect(ids(await readQueue(server))).toEqual([waiting])
    const history = await readHistory(server, thread)
    expect(history.messages).toContainEqual(
      expect.objectContaining({
        id: `${running}:steer:${queueId}`,
        role: 'user',
        executionId: running,
        content: [{ type: 'text', text: 'also this' }],
      }),
    )
    gate.open()
    await first.rest()
    const after = await readHistory(server, thread)
    expect(
      after.messages.find((message) => message.id === `${running}:steer:${queueId}`),
    ).toMatchObject({ executionStatus: 'success' })
  })

  it('answers 409 unless the execution is the one open to steering [R-QUEUE-409-STEER]', async () => {
    const { server } = await busyThread()
    const stream = await queueChat(server, { message: 'x', sessionId: thread })
    const { queueId } = await stream.until('message-queued')
    const wrong = await call(server, 'POST', queuePath(thread, queueId, 'steer'), {
      executionId: 'not-running',
    })
    expect(wrong).toMatchObject({ status: 409, body: { code: 'not_steerable' } })
    expect((await readQueue(server)).items[0]?.steeringExecutionId).toBeNull()
  })

  it('a steer the turn did not take in goes back where it was when the turn ends [R-QUEUE-STEER-BACK]', async () => {
    const { server, running } = await busyThread()
    const queued: string[] = []
    for (const message of ['a', 'b', 'c']) {
      const stream = await queueChat(server, { message, sessionId: thread })
      queued.push((await stream.until('message-queued')).queueId)
    }
    const [a, b, c] = queued as [string, string, string]
    await call(server, 'POST', queuePath(thread, b, 'steer'), { executionId: running })
    expect(ids(await readQueue(server))).toEqual([b, a, c])
    await del(server, stopPath(thread, running))
    // The Stop ends the turn at its pause, before it took the steer in: `a` starts next.
    const queue = await waitFor(async () => {
      const read = await readQueue(server)
      return read.steerableExecutionId !== null && read.steerableExecutionId !== running && read
    }, 'the next item to start')
    expect(queue.items).toEqual([
      expect.objectContaining({ id: b, steeringExecutionId: null }),
      expect.objectContaining({ id: c }),
    ])
  })
})

describe('each change of a queue is pushed to the owner’s tabs, without contents [R-QUEUE-PUSH]', () => {
  it('agentMessageQueueUpdated {projectId, agentId, threadId} on queueing, editing, reordering and removing; never to another user', async () => {
    const { server } = await busyThread()
    const alice = await openQueuePush(server, 'alice')
    const bob = await openQueuePush(server, 'bob')
    const queueUpdates = () => alice.messages.filter((m) => m.type === 'agentMessageQueueUpdated')
    const update = {
      type: 'agentMessageQueueUpdated',
      data: { projectId: 'p1', agentId: 'a1', threadId: thread },
    }
    const a = await queueChat(server, { message: 'a', sessionId: thread })
    const b = await queueChat(server, { message: 'b', sessionId: thread })
    const aId = (await a.until('message-queued')).queueId
    const bId = (await b.until('message-queued')).queueId
    await waitFor(() => queueUpdates().length === 2, 'two queue pushes')
    await call(server, 'PATCH', queuePath(thread, aId), { message: 'a2' })
    await call(server, 'POST', queuePath(thread, bId, 'reorder'), {
      targetQueueId: aId,
      expectedQueueIds: [aId, bId],
    })
    await call(server, 'DELETE', queuePath(thread, aId))
    await waitFor(() => queueUpdates().length === 5, 'five queue pushes')
    expect(queueUpdates()).toEqual(Array(5).fill(update))
    expect(bob.messages).toEqual([])
    alice.close()
    bob.close()
  })
})

describe('a client messageId makes a retried POST a duplicate [R-QUEUE-DEDUPE]', () => {
  it('a second POST of an accepted messageId is answered with done alone and queues nothing', async () => {
    const { server } = await busyThread()
    const messageId = crypto.randomUUID()
    const first = await queueChat(server, { message: 'once', sessionId: thread, messageId })
    await first.until('message-queued')
    const retry = await queueChat(server, { message: 'once', sessionId: thread, messageId })
    expect(await retry.rest()).toEqual([{ type: 'done' }])
    expect((await readQueue(server)).items.map((item) => item.message)).toEqual(['once'])
  })

  it('a duplicate for a thread it would create makes no thread; a messageId needs a sessionId (400) [R-QUEUE-DEDUPE-SESSION]', async () => {
    const server = await startQueueHost()
    const noSession = await call(server, 'POST', '/rest/projects/p1/agents/v2/a1/chat', {
      message: 'x',
      messageId: crypto.randomUUID(),
    })
    expect(noSession.status).toBe(400)
    const messageId = crypto.randomUUID()
    const first = await queueChat(server, { message: 'hi', ...newThread, messageId })
    await first.rest()
    const retry = await queueChat(server, { message: 'hi', ...newThread, messageId })
    expect(await retry.rest()).toEqual([{ type: 'done' }])
    const history = await readHistory(server, thread)
    expect(history.messages.filter((message) => message.role === 'user')).toHaveLength(1)
    expect(unhandled).toEqual([])
  })
})
