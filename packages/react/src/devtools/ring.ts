/**
 * The last `limit` values pushed, oldest first: a fixed array written in a circle, so a push
 * costs the same at the 10th and the 10,000th value (the devtools log every step of a session
 * from mount, and a turn's deltas are many). `toArray` copies, for a snapshot that React keeps.
 */
export interface Ring<T> {
  push(value: T): void
  toArray(): T[]
}

/** A ring of at most `limit` values; `limit` is at least 1 (a smaller one is taken as 1). */
export function createRing<T>(limit: number): Ring<T> {
  const size = Math.max(1, Math.floor(limit))
  const slots: T[] = []
  let next = 0
  return {
    push(value) {
      slots[next] = value
      next = (next + 1) % size
    },
    toArray: () =>
      slots.length < size ? [...slots] : [...slots.slice(next), ...slots.slice(0, next)],
  }
}
