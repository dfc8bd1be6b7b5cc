/**
 * The released platform's part (issue 36): what only the released n8n 2.41 asks of a client —
 * stand-in ids for a turn it does not announce, the statuses its snapshots leave out, a silent
 * turn's deadline, Stop by closing the stream — is a part (`releasedPart`, brought by
 * `releasedPlatform()`), which `createPreviewChatClient` carries and a client for the spec's
 * servers only may leave out. Without it, a turn such a server begins unannounced still runs to its
 * end there (its stream is read, never closed), and the warning, the read's error and Stop's error
 * each say which option to pass. Against the reference server's emulation of that release.
 */
import { afterEach, describe, expect, it } from 'vitest'
// A relative import keeps the workspace free of a core ⇄ server dependency cycle (test-only).
import { createPreviewChatBackend, type PreviewChatBackend } from '../../../server/src/index'
import type { EngineAction, EngineState } from '../engine/model'
import { initialEngineState, reducerWith } from '../engine/reduce'
import { nextDeadline } from '../engine/schedule'
import { releasedPart, silentOf } from '../engine/slices/released'
import {
  createMinimalPreviewChatClient,
  createPreviewChatClient,
  PreviewChatError,
  releasedPlatform,
  type PreviewChatClientOptions,
} from '../index'
import { aliceOnEmulatedN8n, answer, watch } from './emulatedN8n'
import { engineConfig as config, key as engineKey } from './harness'
import { explain } from '../wire/contract/explain'
import { itemsOf } from './world/storage'

let backend: PreviewChatBackend

afterEach(async () => {
  await backend.close()
})

const key = { projectId: 'p', agentId: 'a' }
const thread = () => ({ ...key, threadId: crypto.randomUUID() })

/** A tab of alice on the emulated n8n 2.41, with a minimal client and what `options` add. */
function tab(options: Partial<PreviewChatClientOptions> = {}) {
  const warnings: string[] = []
  const alice = aliceOnEmulatedN8n(backend)
  const client = createMinimalPreviewChatClient({
    ...alice,
    onWarning: (message) => warnings.push(message),
    ...(options.released !== undefined && { released: options.released }),
  })
  return { client, warnings, stored: () => [...itemsOf(alice.storage).values()] }
}

async function until<T>(probe: () => T | undefined | false, ms = 4_000): Promise<T> {
  const started = Date.now()
  for (;;) {
    const value = probe()
    if (value) return value
    if (Date.now() - started > ms) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/** The assistant message the server recorded for the thread, once its turn ended there. */
const recordedEnd = (threadId: string) => () => {
  const last = backend.inspect.history(threadId, 'alice')?.messages.at(-1)
  return last?.role === 'assistant' && last.executionStatus !== 'running' ? last : undefined
}

describe('the released platform is a part a client for the spec only leaves out [R-RELEASED-PART]', () => {
  it('without it, a turn begun unannounced runs to its end there, unshown, and each message names the option', async () => {
    backend = createPreviewChatBackend({ dev: true, flavor: 'n8n-2.41', deltaMs: 2, snapshotMs: 5 })
    const { threadId } = thread()
    const a = tab()
    const session = a.client.session({ ...key, threadId, isNew: true })
    const seen = watch(session)
    session.setDraft('/long 30')
    expect(a.stored().some((item) => item.includes('/long 30'))).toBe(true)
    // Taken: the draft goes, as on any server, from the tab's storage too.
    expect(await session.submit()).toEqual({ outcome: 'accepted', executionId: null })
    expect(session.getState().draft).toBe('')
    expect(a.stored().some((item) => item.includes('/long 30'))).toBe(false)
    // The gate stays shut while it runs unshown: a second message would be a second turn there.
    expect(await session.submit('another')).toEqual({ outcome: 'busy' })
    // The stream is read to its end, not closed (closing it cancels the turn on this server).
    const recorded = await until(recordedEnd(threadId))
    expect(recorded.executionStatus).toBe('success')
    expect(
      recorded.content.map((part) => (part.type === 'text' ? part.text : '')).join(''),
    ).toContain('delta 30.')
    // Nothing of it showed live; what it is, the reads say — and they say which option reads them.
    const failed = await until(() => session.getState().readError ?? undefined)
    expect(failed.code).toBe('invalid_response')
    expect(failed.message).toContain('released: releasedPlatform()')
    for (const state of seen.states) expect(answer(state)).toBe('')
    // Never streaming, and never idle again: this client cannot read what runs there.
    expect(seen.statuses()).toEqual(['idle', 'submitting', 'recovering'])
    expect(await session.submit('another')).toEqual({ outcome: 'busy' })
    expect(a.warnings.filter((w) => w.includes('released: releasedPlatform()'))).toHaveLength(1)
    expect(a.warnings[0]).toMatch(/^A turn stream began with "start-step", not "execution-started"/)
    // It learnt what such a server is: its turns are not closed, and Stop says what to pass.
    expect(session.getState().server).toEqual({
      keepsTurnOnDisconnect: false,
      stopsByExecutionId: false,
    })
    const stopped = await session.stop()
    expect(stopped.cancelRequested).toBe(false)
    expect(stopped.error?.code).toBe('unsupported')
    expect(stopped.error?.message).toContain('released: releasedPlatform()')
    seen.stop()
    session.dispose()
  })

  it('with released: releasedPlatform(), the same minimal client shows that turn live and stops it by closing', async () => {
    backend = createPreviewChatBackend({ dev: true, flavor: 'n8n-2.41', deltaMs: 5, snapshotMs: 5 })
    const { threadId } = thread()
    const a = tab({ released: releasedPlatform() })
    const session = a.client.session({ ...key, threadId, isNew: true })
    const seen = watch(session)
    session.setDraft('/long 200')
    expect(await session.submit()).toEqual({ outcome: 'accepted', executionId: null })
    await until(() => answer(session.getState()).includes('delta 3.'))
    expect(session.getState().messages.at(-1)?.executionId).toMatch(/^unannounced:/)
    expect(await session.stop()).toEqual({ cancelRequested: true })
    const final = await until(() => {
      const state = session.getState()
      return state.status === 'idle' && state.messages.at(-1)?.executionStatus !== 'running'
        ? state
        : undefined
    })
    expect(final.messages.at(-1)?.executionStatus).toBe('cancelled')
    expect(final.messages.at(-1)?.id).toMatch(/^[A-Za-z0-9]{16}:assistant$/)
    expect(final.readError).toBeNull()
    expect(seen.statuses()).toEqual(['idle', 'submitting', 'streaming', 'stopping', 'idle'])
    expect(a.warnings.some((w) => w.includes('releasedPlatform'))).toBe(false)
    seen.stop()
    session.dispose()
  })

  it('createPreviewChatClient has it; released: false leaves it out; anything else is refused', async () => {
    backend = createPreviewChatBackend({ dev: true, flavor: 'n8n-2.41', deltaMs: 2, snapshotMs: 5 })
    const options = {
      ...aliceOnEmulatedN8n(backend),
      push: false as const,
      relay: false as const,
      onWarning: () => {},
    }
    // A thread with one finished turn, as this server records it (no statuses on user messages).
    const { threadId } = thread()
    const writer = createPreviewChatClient(options).session({ ...key, threadId, isNew: true })
    writer.setDraft('hello')
    await writer.submit()
    await until(recordedEnd(threadId))
    writer.dispose()
    const read = async (client: ReturnType<typeof createPreviewChatClient>) => {
      const session = client.session({ ...key, threadId })
      const stop = session.subscribe(() => {})
      const state = await until(() => {
        const s = session.getState()
        return s.readError !== null || s.lastSyncedAt !== null ? s : undefined
      })
      stop()
      session.dispose()
      return state
    }
    const full = await read(createPreviewChatClient(options))
    expect(full.readError).toBeNull()
    expect(full.messages.map((m) => m.executionStatus)).toEqual(['success', 'success'])
    const specOnly = await read(createPreviewChatClient({ ...options, released: false }))
    expect(specOnly.readError?.message).toContain('released: releasedPlatform()')
    expect(specOnly.messages).toEqual([])
    const { enginePart, completeSnapshot } = releasedPlatform()
    for (const junk of [
      {},
      true,
      'n8n',
      { enginePart },
      { completeSnapshot },
      { enginePart: {}, completeSnapshot },
    ])
      expect(() => createMinimalPreviewChatClient({ released: junk as never })).toThrow(
        new PreviewChatError(
          'invalid_request',
          `Pass released: releasedPlatform(), or false.${explain('bad-option')}`,
        ),
      )
  })
})

describe('the engine without the part [R-RELEASED-PART]', () => {
  const specOnly = reducerWith()
  const withPart = reducerWith([releasedPart])

  /** This tab, read (an empty thread), its message posted as request 1. */
  function posted(reducer: typeof specOnly): EngineState {
    let state = initialEngineState({ key: engineKey, tab: 'me' })
    for (const action of [
      { type: 'mounted', cached: { kind: 'none' }, at: 0, stampedAt: 0, random: 0 },
      { type: 'activated', at: 0, pushConnected: true },
      {
        type: 'snapshot',
        snapshot: { messages: [], openSuspensions: [], activeExecutionId: null },
        fresh: true,
        fromRead: true,
        at: 0,
        stampedAt: 0,
        random: 0,
      },
      { type: 'submit-requested', request: 1, text: 'hi', messageId: 'm1', at: 1, stampedAt: 1 },
    ] as EngineAction[])
      state = reducer(state, action, config).state
    return state
  }
  const delta: EngineAction = {
    type: 'turn-events',
    token: 1,
    events: [{ type: 'text-delta', id: 't', delta: 'Hel' }],
    at: 2,
    stampedAt: 2,
  } as EngineAction

  it('takes an unannounced turn as accepted and follows it by reads, closing nothing', () => {
    const before = posted(specOnly)
    expect(before.own?.phase).toBe('posting')
    const { state, commands } = specOnly(before, delta, config)
    expect(state.own).toBeNull()
    expect(state.live).toBeNull()
    expect(state.cut).toBe(true)
    expect(state.streams).toEqual([1])
    expect(state.server).toEqual({ keepsTurnOnDisconnect: false, stopsByExecutionId: false })
    // No relay command: this engine has no relay part (the message is no longer on its way).
    expect(commands.map((c) => c.type)).toEqual(['warn', 'settle-submit'])
    expect(specOnly(before, delta, config).events).toContainEqual({
      type: 'posting',
      active: false,
    })
    expect(commands[1]).toEqual({
      type: 'settle-submit',
      request: 1,
      result: { outcome: 'accepted', executionId: null },
    })
    expect(commands.some((c) => c.type === 'close-stream')).toBe(false)
    // The rest of its stream changes nothing here; its end leaves the stream list.
    const more = specOnly(state, { ...delta, at: 3, stampedAt: 3 } as EngineAction, config)
    expect(more.state).toBe(state)
    const ended = specOnly(
      state,
      { type: 'stream-ended', token: 1, end: { kind: 'terminal' }, at: 4 } as EngineAction,
      config,
    )
    expect(ended.state.streams).toEqual([])
  })

  it('keeps the gate shut while that stream is open, a 404 meanwhile being "not recorded yet"', () => {
    const { state } = specOnly(posted(specOnly), delta, config)
    const read = specOnly(state, { type: 'read-started', at: 3, fetch: 1 } as EngineAction, config)
    const notFound = specOnly(
      read.state,
      {
        type: 'read-failed',
        error: { code: 'not_found', message: 'no such thread', status: 404 },
        at: 4,
        random: 0.5,
      } as EngineAction,
      config,
    ).state
    expect(notFound.notFound).toBe(false)
    expect(notFound.cut).toBe(true)
    expect(notFound.readError).toBeNull()
    const busy = specOnly(
      notFound,
      {
        type: 'submit-requested',
        request: 2,
        text: 'again',
        messageId: 'm2',
        at: 5,
        stampedAt: 5,
      } as EngineAction,
      config,
    )
    expect(busy.commands).toEqual([
      { type: 'settle-submit', request: 2, result: { outcome: 'busy' } },
    ])
  })

  it('answers a Stop held for that message, asked before its first event, with what to pass', () => {
    const held = specOnly(
      posted(specOnly),
      { type: 'stop-requested', request: 7, at: 1 } as EngineAction,
      config,
    ).state
    expect(held.stop?.kind).toBe('held')
    const { state, commands } = specOnly(held, delta, config)
    expect(state.stop).toBeNull()
    const settled = commands.find((c) => c.type === 'settle-stop')
    expect(settled).toMatchObject({
      requests: [7],
      result: { cancelRequested: false, error: { code: 'unsupported' } },
    })
    expect(JSON.stringify(settled)).toContain('released: releasedPlatform()')
    expect(commands.some((c) => c.type === 'close-stream')).toBe(false)
  })

  it('with the part, the same turn is live under a stand-in id, and a derived turn keeps a deadline', () => {
    const { state } = withPart(posted(withPart), delta, config)
    expect(state.own?.phase).toBe('streaming')
    expect(state.live?.executionId).toBe('unannounced:1')
    const silent = withPart(
      state,
      {
        type: 'snapshot',
        snapshot: {
          messages: [],
          openSuspensions: [],
          activeExecutionId: 'e9',
          derived: true,
        },
        fresh: true,
        fromRead: false,
        at: 10,
        stampedAt: 10,
        random: 0,
      } as EngineAction,
      config,
    ).state
    expect(silentOf(silent)).toEqual({ executionId: 'e9', since: 10, expired: false })
    expect(nextDeadline(silent, config, [releasedPart])).not.toBeNull()
    expect(nextDeadline(silent, config, [])).toBe(
      nextDeadline({ ...silent, released: { silent: null } } as EngineState, config, []),
    )
  })
})
