import type { HistorySnapshot, Message, MessagePart } from './snapshot'
import { childTraceChars, turnMessages, type LiveTurn } from './turn'

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

/** How far a message has got: its part count and its characters of text. */
function progress(message: Message): [parts: number, chars: number] {
  let chars = 0
  for (const part of message.content) chars += partChars(part)
  return [message.content.length, chars]
}

function partChars(part: MessagePart): number {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return part.text.length
    case 'tool-call':
      return part.childTrace ? childTraceChars(part.childTrace) : 0
    case 'file':
      return 0
  }
}

/**
 * Whether the recorded snapshot has caught up with the live turn. Snapshots are written in
 * batches, so one may lag behind what this tab already streamed; replacing the live view with it
 * would make text visibly shrink. A recorded turn that ended is always authoritative (spec:
 * "Recorded state determines completion").
 */
export function recordCovers(snapshot: HistorySnapshot, turn: LiveTurn): boolean {
  const recorded = snapshot.messages.find((message) => message.id === turn.assistant.id)
  if (!recorded) return false
  if (recorded.executionStatus !== 'running') return true
  const [recordedParts, recordedChars] = progress(recorded)
  const [liveParts, liveChars] = progress(turn.assistant)
  return recordedParts >= liveParts && recordedChars >= liveChars
}

/**
 * Whether a snapshot should replace this tab's live view of a turn: once the record shows the
 * turn ended (it decides completion), or, while the turn runs, once the record has overtaken the
 * live view. A record merely level with a running turn adds nothing while the live view (this
 * tab's stream, or another tab's relayed one) keeps growing token by token.
 */
export function recordSupersedes(snapshot: HistorySnapshot, turn: LiveTurn): boolean {
  const recorded = snapshot.messages.find((message) => message.id === turn.assistant.id)
  if (!recorded) return false
  if (recorded.executionStatus !== 'running') return true
  if (turn.ended) return false
  const [recordedParts, recordedChars] = progress(recorded)
  const [liveParts, liveChars] = progress(turn.assistant)
  return recordCovers(snapshot, turn) && (recordedParts > liveParts || recordedChars > liveChars)
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
