/**
 * The draft's fate, decided in one place: what the composer holds, and the `messageId` it was sent
 * with while its fate is not known (`EngineState.draftSentAs`, kept with it across a reload). The
 * slices and the queue never set either: they report what happened to a message (`StepEvent`
 * `message`: posted, taken, refused), and the post-step (`postStep`) decides here, from those
 * events, the action and the record [R-DRAFT-SENT-ID].
 */
import type { EngineAction, EngineState, StepEvent } from './model'

/**
 * The `messageId` that `text`, sent now, goes by: the draft's sent id while the draft's fate is not
 * known (its POST lost, or late; its page left) — the same message sent again, as a turn or queued,
 * so a server that dedupes takes it once and a record that holds it says so — else `fresh`.
 */
export const sendsAs = (state: EngineState, text: string, fresh: string): string =>
  text === state.draft ? (state.draftSentAs ?? fresh) : fresh

/**
 * The draft is on its way as this tab's own turn: its POST is not answered yet (the draft is kept
 * until it is accepted, for the person to send again if it is refused). Sending it again now would
 * send it twice — at once, or through the queue while its turn runs ([R-QUEUE-DRAFT-ON-ITS-WAY]).
 */
export const draftOnItsWay = (state: EngineState): boolean =>
  state.draftSentAs != null &&
  state.own?.request.kind === 'message' &&
  state.own.request.body.messageId === state.draftSentAs

/**
 * The draft after a step (`before` → `after`, what `action` did, the `events` it reported):
 * - changed otherwise (typed, put back by the queue), it is no longer the message it was sent as;
 * - this tab's message that is the draft (`token` > 0: a `submit()`, not the queue's send) posted:
 *   its id is kept beside the draft until its fate is known;
 *   taken (accepted, or queued): the draft clears;
 *   refused for sure: the draft stays, its id is forgotten — unless that POST sent it again, which
 *   says nothing of the first;
 * - a fresh record that holds the draft's sent id: the message was taken, whatever else this tab
 *   has on its way — a POST of that same message sent again too (its answer cannot bring it back).
 */
export function draftFate(
  before: EngineState,
  after: EngineState,
  action: EngineAction,
  events: readonly StepEvent[] = [],
): EngineState {
  let { draft, draftSentAs: sentAs } = after
  if (draft !== before.draft) sentAs = null
  for (const event of events) {
    if (event.type !== 'message') continue
    const isDraft = event.token > 0 && event.text === draft
    if (event.fate === 'posted' && isDraft) sentAs = event.messageId
    else if (event.fate === 'taken' && isDraft) [draft, sentAs] = ['', null]
    else if (event.fate === 'refused' && event.resent !== true && event.messageId === sentAs)
      sentAs = null
  }
  const taken =
    sentAs !== null &&
    action.type === 'snapshot' &&
    action.fresh &&
    after.recorded?.messages.some((message) => message.messageId === sentAs) === true
  if (taken) [draft, sentAs] = ['', null]
  return draft === after.draft && sentAs === after.draftSentAs
    ? after
    : { ...after, draft, draftSentAs: sentAs }
}
