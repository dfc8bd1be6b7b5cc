import { describe, expect, it } from 'vitest'
import { createRing } from '../devtools/ring'

describe('createRing: the devtools keep the last N actions', () => {
  it('holds what was pushed, oldest first, until it is full', () => {
    const ring = createRing<number>(3)
    const seen = [ring.toArray()]
    for (const value of [1, 2, 3]) {
      ring.push(value)
      seen.push(ring.toArray())
    }
    expect(seen).toEqual([[], [1], [1, 2], [1, 2, 3]])
  })

  it('then drops the oldest for each new one, at every step', () => {
    const ring = createRing<number>(3)
    const seen: number[][] = []
    for (let value = 1; value <= 7; value += 1) {
      ring.push(value)
      seen.push(ring.toArray())
    }
    expect(seen.slice(3)).toEqual([
      [2, 3, 4],
      [3, 4, 5],
      [4, 5, 6],
      [5, 6, 7],
    ])
  })

  it('keeps 200 of 10,000 without growing, and its snapshots are copies', () => {
    const ring = createRing<number>(200)
    for (let value = 0; value < 10_000; value += 1) ring.push(value)
    const snapshot = ring.toArray()
    expect(snapshot).toHaveLength(200)
    expect([snapshot[0], snapshot.at(-1)]).toEqual([9800, 9999])
    ring.push(10_000)
    expect(snapshot.at(-1)).toBe(9999)
  })

  it('takes a limit below 1 as 1', () => {
    const ring = createRing<string>(0)
    ring.push('a')
    ring.push('b')
    expect(ring.toArray()).toEqual(['b'])
  })
})
