import type { HistorySnapshot, Message, MessagePart } from '../wire/contract/snapshot'
import { childTraceChars, turnMessages, type LiveTurn } from './fold'

/**
 * Flags delegations whose recorded child trace used up its budget (`truncated`), the same rule
 * the live view applies, so live and recovered views show the same thing. Returns the snapshot
 * unchanged (same object) when no delegation is capped.
 */
export function markTruncated(
  snapshot: HistorySnapshot,
  delegationCharLimit: number,
): HistorySnapshot {
  // Nothing is copied (nor allocated) unless a delegation is capped: this runs on every read.
  let messages: Message[] | null = null
  snapshot.messages.forEach((message, i) => {
    let content: MessagePart[] | null = null
    message.content.forEach((part, j) => {
      if (part.type !== 'tool-call' || !part.childTrace || part.childTrace.truncated) return
      if (childTraceChars(part.childTrace) < delegationCharLimit) return
      content ??= message.content.slice()
      content[j] = { ...part, childTrace: { ...part.childTrace, truncated: true } }
    })
    if (!content) return
    messages ??= snapshot.messages.slice()
    messages[i] = { ...message, content }
  })
  return messages ? { ...snapshot, messages } : snapshot
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
  const recorded = recordedMessage(snapshot, turn.assistant.id)
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
  const recorded = recordedMessage(snapshot, turn.assistant.id)
  if (!recorded) return false
  if (recorded.executionStatus !== 'running') return true
  if (turn.ended) return false
  const [recordedParts, recordedChars] = progress(recorded)
  const [liveParts, liveChars] = progress(turn.assistant)
  const covers = recordedParts >= liveParts && recordedChars >= liveChars
  return covers && (recordedParts > liveParts || recordedChars > liveChars)
}

/** The recorded message with this id (its first place), found through the transcript's index. */
export function recordedMessage(snapshot: HistorySnapshot, id: string): Message | undefined {
  const index = positionsOf(snapshot.messages).byId.get(id)
  return index === undefined ? undefined : snapshot.messages[index]
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

/** Where each message of a recorded transcript stands, by id: built once per transcript. */
const positions = new WeakMap<readonly Message[], { byId: Map<string, number>; unique: boolean }>()

function positionsOf(recorded: readonly Message[]) {
  const known = positions.get(recorded)
  if (known) return known
  const byId = new Map<string, number>()
  // The first place of an id, as a scan would find it.
  recorded.forEach((message, i) => {
    if (!byId.has(message.id)) byId.set(message.id, i)
  })
  const index = { byId, unique: byId.size === recorded.length }
  positions.set(recorded, index)
  return index
}

/**
 * The transcript with a live turn in it. It runs for every network chunk of a stream, so the
 * recorded messages are looked up in an index kept per recorded transcript (not scanned), and
 * the new list is made of slices of the recorded one.
 */
function withTurn(recorded: readonly Message[], live: LiveTurn): Message[] {
  const overlay = turnMessages(live)
  const { byId, unique } = positionsOf(recorded)
  const found: number[] = []
  for (const message of overlay) {
    const index = byId.get(message.id)
    if (index !== undefined) found.push(index)
  }
  if (found.length === 0) return recorded.concat(overlay)
  // The record already holds this turn: put the live messages where the recorded ones stood.
  found.sort((a, b) => a - b)
  const at = found[0] ?? 0
  if (!unique) {
    // An id recorded twice (a server's bug): every copy goes, as a scan would do.
    const replaced = new Set(overlay.map((message) => message.id))
    const rest = recorded.slice(at).filter((message) => !replaced.has(message.id))
    return recorded.slice(0, at).concat(overlay, rest)
  }
  const parts: Message[][] = [overlay]
  found.forEach((index, i) => parts.push(recorded.slice(index + 1, found[i + 1])))
  return recorded.slice(0, at).concat(...parts)
}
