/**
 * What a server says it can do beyond the contract, in one response header of its answers — its
 * turn streams and its reads alike (`Preview-Chat-Capabilities: message-dedupe, message-queue`). The reference server sends it;
 * the platform's own server sends none, and a client learns the same from its first queue event
 * (`message-queued`: the platform's queue dedupes too) or from its `server` option.
 */

/** The response header (of any answer of the agents API) that lists the capabilities. */
export const capabilitiesHeader = 'Preview-Chat-Capabilities'

/**
 * - `message-dedupe`: a chat POST whose `messageId` the thread already accepted is answered with a
 *   bare `done` and records nothing (a POST whose answer was lost may be sent again, same ids).
 * - `message-queue`: a message posted while a turn runs is queued (`message-queued`), and the
 *   queue routes exist (`queue.ts`).
 */
export type ServerCapability = 'message-dedupe' | 'message-queue'

export const serverCapabilities: readonly ServerCapability[] = ['message-dedupe', 'message-queue']

/** What the header says, as flags (false for what it does not list, or without a header). */
export interface ServerCapabilities {
  dedupesMessages: boolean
  queuesMessages: boolean
}

/**
 * The header's value (`response.headers.get(capabilitiesHeader)`) as its tokens, trimmed and in
 * lower case, unknown ones kept: what a client's actions carry (`turn-opened`,
 * `capabilities-heard`), as data, so that each part reads the token it knows (the engine
 * `message-dedupe`, the queue of `@preview-chat/core/queue` `message-queue`) and a client without
 * a part carries none of its token. No header: none.
 */
export function capabilityTokens(header: string | null | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((token) => token.trim().toLowerCase())
    .filter(Boolean)
}

/** Reads the header's value (`response.headers.get(capabilitiesHeader)`); unknown tokens are skipped. */
export function parseCapabilities(header: string | null | undefined): ServerCapabilities {
  const tokens = capabilityTokens(header)
  return {
    dedupesMessages: tokens.includes('message-dedupe'),
    queuesMessages: tokens.includes('message-queue'),
  }
}

/** The header's value for these capabilities (the server's side). */
export function formatCapabilities(capabilities: readonly ServerCapability[]): string {
  return serverCapabilities.filter((capability) => capabilities.includes(capability)).join(', ')
}
