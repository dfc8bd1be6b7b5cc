/**
 * Exponential backoff with "equal jitter": attempt 0 waits between base/2 and base, each next one
 * twice as long, never more than `max`. Jitter keeps many tabs from retrying in lockstep; `random`
 * is the caller's (engine/ reads no randomness of its own).
 */
export function backoffDelay(
  attempt: number,
  base: number,
  max: number,
  random: () => number,
): number {
  const ceiling = Math.min(max, base * 2 ** attempt)
  return Math.round(ceiling / 2 + (random() * ceiling) / 2)
}
