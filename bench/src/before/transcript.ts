import type { HistorySnapshot, Message } from '@preview-chat/core'
import { childTraceChars, turnMessages, type LiveTurn } from '@preview-chat/core/internal'

/**
 * Flags delegations whose recorded child trace used up its budget (`truncated`), the same rule
 * the live view applies, so live and recovered views show the same thing. Returns the snapshot
 * unchanged (same object) when no delegation is capped.
 */
export function markTruncated(
  snapshot: HistorySnapshot,
  delegationCharLimit: number,
): HistorySnapshot {
  let changed = false
  const messages = snapshot.messages.map((message) => {
    let touched = false
    const content = message.content.map((part) => {
      if (part.type !== 'tool-call' || !part.childTrace || part.childTrace.truncated) return part
      if (childTraceChars(part.childTrace) < delegationCharLimit) return part
      touched = true
      return { ...part, childTrace: { ...part.childTrace, truncated: true } }
    })
    if (!touched) return message
    changed = true
    return { ...message, content }
  })
  return changed ? { ...snapshot, messages } : snapshot
}

/**
 * The visible transcript: the recorded messages, with each live turn's messages in their place
 * (or after them when the record does not have them yet). Costs O(messages); callers memoise it.
 */
export function composeTranscript(
  recorded: readonly Message[],
  live: LiveTurn | null | readonly (LiveTurn | null)[],
): Message[] {
  const turns = Array.isArray(live) ? live : [live]
  let messages = recorded as Message[]
  for (const turn of turns as readonly (LiveTurn | null)[]) {
    if (turn) messages = withTurn(messages, turn)
  }
  return messages
}

function withTurn(recorded: readonly Message[], live: LiveTurn): Message[] {
  const overlay = turnMessages(live)
  const ids = new Set(overlay.map((message) => message.id))
  const kept = recorded.filter((message) => !ids.has(message.id))
  if (kept.length === recorded.length) return [...recorded, ...overlay]
  // The record already holds this turn: put the live messages where the recorded ones stood.
  const at = recorded.findIndex((message) => ids.has(message.id))
  return [...kept.slice(0, at), ...overlay, ...kept.slice(at)]
}
