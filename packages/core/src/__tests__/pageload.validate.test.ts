/**
 * Issue 30: the transport's `held` snapshot (what the session shows: a transcript kept across the
 * reload, the app's cache) is where a first read looks for messages it need not validate again —
 * only a hint: what changed is validated, and what breaks the contract is still rejected. The
 * session's use of it, with `persistTranscripts()`, is in persist.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { createTransport } from '../wire/transport'
import { finishedTurn, key, snapshot } from './harness'

const record = [...finishedTurn('e1', 'Q', 'A'), ...finishedTurn('e2', 'Q2', 'B')]
const transportAnswering = (body: unknown) =>
  createTransport({
    baseUrl: '/rest',
    requestTimeoutMs: 1_000,
    timers: { setTimeout: () => 0, clearTimeout: () => {}, now: () => 0 },
    fetch: async () => Response.json(body),
  })

describe('a first read takes the held messages it repeats [R-PERSIST-RELOAD]', () => {
  it('the same objects for what is equal; what breaks the contract is still rejected', async () => {
    const held = snapshot(record)
    const read = await transportAnswering({ data: snapshot(record) }).readHistory(
      key,
      undefined,
      held,
    )
    read.messages.forEach((message, i) => expect(message).toBe(held.messages[i]))
    const broken = {
      ...snapshot(record),
      messages: [...record.slice(0, 3), { id: 'x', role: 'bot' }],
    }
    await expect(
      transportAnswering({ data: broken }).readHistory(key, undefined, held),
    ).rejects.toMatchObject({ code: 'invalid_response' })
  })
})
