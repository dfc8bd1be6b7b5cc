/**
 * The core's layer rules (eslint.config.js, "The core's layers" and "what each layer may touch"),
 * each shown failing on a planted violation: a snippet linted as if it were a file of that layer,
 * through ESLint's own API and the repository's config. A clean snippet of each layer passes.
 */
import { fileURLToPath } from 'node:url'
import { ESLint } from 'eslint'
import { beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../../../', import.meta.url))
let eslint: ESLint

beforeAll(async () => {
  eslint = new ESLint({ cwd: root })
  await lint('engine', 'export const warm = 1\n') // loads the config and the parser once
}, 60_000)

type Layer = 'engine' | 'effects' | 'wire' | 'platform'

/** What ESLint says of `code` as `packages/core/src/<layer>/planted.ts`. */
async function lint(layer: Layer, code: string) {
  const [result] = await eslint.lintText(code, {
    filePath: `${root}packages/core/src/${layer}/planted.ts`,
  })
  return result!.messages.map(({ ruleId, message }) => ({ ruleId, message }))
}

const ruleIds = async (layer: Layer, code: string) =>
  (await lint(layer, code)).map((message) => message.ruleId)

describe('engine/ is pure: no clock, timer, randomness, I/O, browser or dynamic import', () => {
  it.each([
    // a clock
    ['no-restricted-globals', 'export const t = performance.now()'],
    ['no-restricted-properties', 'export const t = Date.now()'],
    ['no-restricted-syntax', 'export const t = new Date()'],
    ['no-restricted-syntax', 'export const t = Date()'],
    ['no-restricted-globals', 'export const t = process.hrtime()'],
    // a timer
    ['no-restricted-globals', 'export const h = setTimeout(() => {}, 1)'],
    ['no-restricted-globals', 'export const h = setInterval(() => {}, 1)'],
    ['no-restricted-globals', 'queueMicrotask(() => {})'],
    ['no-restricted-globals', 'export const h = requestAnimationFrame(() => {})'],
    // randomness
    ['no-restricted-properties', 'export const r = Math.random()'],
    ['no-restricted-globals', 'export const id = crypto.randomUUID()'],
    // I/O
    ['no-restricted-globals', "export const p = fetch('/rest')"],
    ['no-restricted-globals', 'export const x = new XMLHttpRequest()'],
    ['no-restricted-globals', "export const s = new WebSocket('ws://x')"],
    ['no-restricted-globals', "export const s = new EventSource('/push')"],
    ['no-restricted-globals', "export const c = new BroadcastChannel('tabs')"],
    // the browser, directly or through globalThis
    ['no-restricted-globals', 'export const w = window.innerWidth'],
    ['no-restricted-globals', 'export const t = document.title'],
    ['no-restricted-globals', 'export const online = navigator.onLine'],
    ['no-restricted-globals', 'export const href = location.href'],
    ['no-restricted-globals', "export const d = localStorage.getItem('d')"],
    ['no-restricted-globals', "export const d = sessionStorage.getItem('d')"],
    ['no-restricted-globals', "export const p = globalThis.fetch('/rest')"],
    // a dynamic import
    ['no-restricted-syntax', "export const m = import('./model')"],
    // the layers above, and the wire's I/O modules
    ['no-restricted-imports', "export { createAlarm } from '../effects/alarm'"],
    ['no-restricted-imports', "export { defaultTimers } from '../platform/environment'"],
    ['no-restricted-imports', "export type { Transport } from '../wire/transport'"],
    ['no-restricted-imports', "export { webSocketPush } from '../wire/pushSource'"],
    ['no-restricted-imports', "export { readSse } from '../wire/sse'"],
    ['no-restricted-imports', "export { createPreviewChatClient } from '../client'"],
    ['no-restricted-imports', "export { createParser } from 'eventsource-parser'"],
  ])('%s fires on `%s`', async (rule, code) => {
    expect(await ruleIds('engine', code)).toContain(rule)
  })

  it('passes what is pure: a time from the action, the wire contract, engine/ itself', async () => {
    const clean = [
      "import type { TurnEvent } from '../wire/contract/events'",
      "import { PreviewChatError } from '../wire/contract/errors'",
      "import { backoffDelay } from './backoff'",
      'export const when = (at: number) => new Date(at).toISOString()',
      "export const parsed = Date.parse('2026-11-30T10:00:00.000Z')",
      'export const delay = (random: number) => backoffDelay(1, 500, 15_000, () => random)',
      "export const error = new PreviewChatError('timeout', 'late')",
      'export type Events = TurnEvent[]',
      '',
    ].join('\n')
    expect(await lint('engine', clean)).toEqual([])
  })
})

describe('effects/ take the clock, timers and randomness from their context', () => {
  it.each([
    ['no-restricted-globals', 'export const t = performance.now()'],
    ['no-restricted-properties', 'export const t = Date.now()'],
    ['no-restricted-syntax', 'export const t = new Date()'],
    ['no-restricted-globals', 'export const h = setTimeout(() => {}, 1)'],
    ['no-restricted-properties', 'export const h = globalThis.setTimeout(() => {}, 1)'],
    ['no-restricted-properties', 'export const t = globalThis.performance.now()'],
    ['no-restricted-properties', 'export const r = Math.random()'],
    ['no-restricted-globals', 'export const id = crypto.randomUUID()'],
    ['no-restricted-globals', "window.addEventListener('pagehide', () => {})"],
    ['no-restricted-properties', "export const d = globalThis.localStorage.getItem('d')"],
  ])('%s fires on `%s`', async (rule, code) => {
    expect(await ruleIds('effects', code)).toContain(rule)
  })

  it('passes the injected world, and the relay adapter’s BroadcastChannel', async () => {
    const clean = [
      "import type { Timers } from '../platform/environment'",
      'export function later(timers: Timers, now: () => number, run: () => void) {',
      '  const since = new Date(now()).toISOString()',
      '  return { since, handle: timers.setTimeout(run, 10) }',
      '}',
      "export const open = () => new BroadcastChannel('preview-chat:')",
      '',
    ].join('\n')
    expect(await lint('effects', clean)).toEqual([])
  })
})

describe('wire/ imports neither the engine’s state nor effects/', () => {
  it.each([
    "export type { EngineState } from '../engine/model'",
    "export { reduce } from '../engine/reduce'",
    "export { selectSessionState } from '../engine/select'",
    "export { createHistoryQuery } from '../effects/historyQuery'",
  ])('no-restricted-imports fires on `%s`', async (code) => {
    expect(await ruleIds('wire', code)).toContain('no-restricted-imports')
  })

  it('passes the contract, the backoff helper and the platform’s timers', async () => {
    const clean = [
      "export { backoffDelay } from '../engine/backoff'",
      "export { defaultTimers } from '../platform/environment'",
      "export { PreviewChatError } from './contract/errors'",
      '',
    ].join('\n')
    expect(await lint('wire', clean)).toEqual([])
  })
})

it('platform/ is where the browser’s globals, timers and clock are read', async () => {
  const clean = [
    "export const visible = () => document.visibilityState === 'visible'",
    "export const listen = (run: () => void) => window.addEventListener('online', run)",
    'export const now = () => performance.now()',
    'export const later = (run: () => void) => globalThis.setTimeout(run, 1)',
    '',
  ].join('\n')
  expect(await lint('platform', clean)).toEqual([])
})
