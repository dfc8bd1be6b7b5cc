/**
 * Where the bus lives in Redis, every name under one prefix (`channelPrefix`, default
 * `preview-chat:`) so that several deployments can share a Redis:
 *
 * | name                              | kind    | what                                          |
 * | --------------------------------- | ------- | --------------------------------------------- |
 * | `<prefix>push`                    | channel | every user's push messages, fanned out locally |
 * | `<prefix>stop`                    | channel | Stops, heard by every instance (as the platform's `n8n.commands`) |
 * | `<prefix>answer:<instanceId>`     | channel | the answers to the Stops this instance relayed |
 * | `<prefix>stop:<mainId, percent-encoded>:<executionId>` | key (string, TTL) | a Stop remembered for the owner, until Redis expires it |
 */
export interface RedisLayout {
  readonly push: string
  readonly stop: string
  answer(instanceId: string): string
  pendingStop(mainId: string, executionId: string): string
  /** A `SCAN … MATCH` pattern for main `mainId`'s remembered Stops. */
  pendingStops(mainId: string): string
}

/** Escapes what `MATCH` reads as a wildcard, so that an id matches only itself. */
const literal = (text: string) => text.replace(/[*?[\]\\]/g, (char) => `\\${char}`)

export function redisLayout(prefix: string): RedisLayout {
  return {
    push: `${prefix}push`,
    stop: `${prefix}stop`,
    answer: (instanceId) => `${prefix}answer:${instanceId}`,
    // The main's id is percent-encoded (no `:` left in it), so that no main's key is another's.
    pendingStop: (mainId, executionId) =>
      `${prefix}stop:${encodeURIComponent(mainId)}:${executionId}`,
    pendingStops: (mainId) => `${literal(`${prefix}stop:${encodeURIComponent(mainId)}:`)}*`,
  }
}
