/**
 * `fixtures/next-era/`: generated from the next-era flavor by `pnpm fixtures:next-era` (no
 * released server speaks the platform's queue yet). The scene is run again and must give the same
 * bytes (a change of the flavor shows up here, and the fixtures are regenerated on purpose), and
 * every file is read by core's parsers, as a client would read it.
 */
import { createParser } from 'eventsource-parser'
import { readdirSync, readFileSync } from 'node:fs'
import {
  capabilitiesHeader,
  parseCapabilities,
  parseHistorySnapshot,
  parseMessageQueue,
  parsePushMessage,
  parseQueueItem,
  parseQueuePushMessage,
  parseQueueRemoveAnswer,
  queueConflicts,
  queueEventFrom,
  turnEventFrom,
  type ParseResult,
} from '@preview-chat/core/contract'
import { describe, expect, it } from 'vitest'
import { captureNextEra } from './next-era-capture'

const directory = new URL('../../../../fixtures/next-era/', import.meta.url)
const names = readdirSync(directory).filter((name) => name !== 'README.md')
const fixture = (name: string) => readFileSync(new URL(name, directory), 'utf8')

function dataOf(text: string): string[] {
  const data: string[] = []
  createParser({ onEvent: (event) => void data.push(event.data) }).feed(text)
  return data
}

/** Each 200 answer's parser, by the route the file is of. */
function answerParser(name: string): (body: unknown) => ParseResult<unknown> {
  if (name === 'history.json') return parseHistorySnapshot
  if (name === 'queue-remove.json') return parseQueueRemoveAnswer
  if (name === 'queue-edit.json' || name === 'queue-steer.json') return parseQueueItem
  return parseMessageQueue
}

describe('fixtures/next-era is what the next-era flavor answers, and what a client parses [R-QUEUE-FIXTURES]', () => {
  it('the scene run again gives every file, byte for byte', async () => {
    const captured = await captureNextEra()
    expect(Object.keys(captured).sort()).toEqual([...names].sort())
    for (const name of names) expect(captured[name], name).toBe(fixture(name))
  })

  it('every turn-stream event is a turn event or a queue event of core’s; every push message one of its pushes', () => {
    for (const name of names.filter((file) => file.startsWith('turn') && file.endsWith('.sse'))) {
      for (const data of dataOf(fixture(name))) {
        const raw: unknown = JSON.parse(data)
        const kind = queueEventFrom(raw).kind === 'event' ? 'event' : turnEventFrom(raw).kind
        expect(kind, `${name}: ${data}`).toBe('event')
      }
    }
    const pushes = dataOf(fixture('push.sse'))
    expect(pushes.length).toBeGreaterThan(0)
    for (const data of pushes) {
      const kind =
        parsePushMessage(data).kind === 'message' ? 'message' : parseQueuePushMessage(data).kind
      expect(kind, data).toBe('message')
    }
  })

  it('every answer parses; every 409 names a queue conflict; the turn stream names the capabilities', () => {
    for (const name of names.filter((file) => file.endsWith('.json'))) {
      const { status, body } = JSON.parse(fixture(name)) as { status: number; body: unknown }
      if (status === 200) {
        expect(answerParser(name)(body).success, name).toBe(true)
      } else {
        expect(name).toMatch(new RegExp(`-${status}\\.json$`))
        if (status === 409) expect(queueConflicts).toContain((body as { code: string }).code)
      }
    }
    const header = fixture('turn.headers.txt')
      .split('\n')
      .find((line) => line.toLowerCase().startsWith(capabilitiesHeader.toLowerCase()))
    expect(parseCapabilities(header?.split(': ')[1])).toEqual({
      dedupesMessages: true,
      queuesMessages: true,
    })
  })
})
