/**
 * `onFinish` runs in every open tab; the ending says whose turn it was (`origin`), so that an app
 * runs a side effect once: `own` in the tab that posted, `followed` in a tab that watched it
 * start, `recovered` in a tab that opened on it already running (a reload mid-answer).
 */
import { render, waitFor } from '@testing-library/react'
import { describe, expect, it, vi } from 'vitest'
import type { TurnEnding } from '@preview-chat/core'
import type { ThreadKey } from '@preview-chat/core'
import { createProbe, Providers, setupChat, tabClient } from './harness'

const chat = setupChat({ deltaMs: 2, snapshotMs: 10 })
const until = { timeout: 10_000 }

function tab(key: ThreadKey) {
  const onFinish = vi.fn<(ending: TurnEnding) => void>()
  const probe = createProbe()
  render(
    <Providers client={tabClient()}>
      <probe.Probe {...key} onFinish={onFinish} />
    </Providers>,
  )
  return { ...probe, onFinish }
}

describe('the ending says whose turn it was [R-TURN-ENDING]', () => {
  it('own in the tab that posted, followed in one that watched it start, recovered in one opened on it', async () => {
    const { key } = await chat.mock.seed.thread({ messages: ['Hello'] })
    const poster = tab(key)
    const watcher = tab(key)
    await waitFor(() => expect(poster.chat().status).toBe('idle'), until)
    await waitFor(() => expect(watcher.chat().status).toBe('idle'), until)

    const turn = chat.mock.holdTurns()
    void poster.chat().submit('/long 20')
    await turn.step(2)
    const late = tab(key) // opened while the turn runs
    await waitFor(() => expect(late.chat().isRunning).toBe(true), until)
    turn.release()

    for (const { onFinish } of [poster, watcher, late])
      await waitFor(() => expect(onFinish).toHaveBeenCalledTimes(1), until)
    const [mine, theirs, recovered] = [poster, watcher, late].map(
      (t) => t.onFinish.mock.calls[0]![0],
    )
    expect(mine).toMatchObject({ origin: 'own', status: 'success' })
    expect(theirs).toMatchObject({ origin: 'followed', executionId: mine!.executionId })
    expect(recovered).toMatchObject({ origin: 'recovered', executionId: mine!.executionId })
  })
})

it('the README lists every status of an ending and its origins', async () => {
  const { readFileSync } = await import('node:fs')
  const readme = readFileSync(`${import.meta.dirname}/../../README.md`, 'utf8')
  const row = readme.split('\n').find((line) => line.startsWith('| `onFinish(ending)`')) ?? ''
  const statuses: TurnEnding['status'][] = [
    'success',
    'error',
    'cancelled',
    'interrupted',
    'suspended',
  ]
  const origins: TurnEnding['origin'][] = ['own', 'followed', 'recovered']
  for (const word of [...statuses, ...origins]) expect(row).toContain(`\`${word}\``)
})
