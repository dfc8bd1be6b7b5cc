/**
 * What a Stop, or a turn that failed, does to the messages still queued (`whenStopped`): `pause`
 * holds them (each `held`) until `queue-resume`, and holds no message queued after it; `keep` goes
 * on; `draft` takes them out of the queue and into the stopping tab's draft.
 */
import type { EngineState, StepEvent } from '../model'
import type { QueueChange, QueueState, StoredQueueItem } from './model'
import { change } from './changes'
import { waitsHere } from './server'

/**
 * After a step: a Stop pressed here, or a turn that failed, does what `whenStopped` says. The
 * sender also pauses on a turn the record shows cancelled (a Stop pressed in another tab, whose
 * pause may not have reached it yet): it sends nothing before it knows how the last turn ended
 * (`readyToSend`), so the pause is never late. `draft` is the stopping tab's alone (the texts go
 * into one draft).
 */
export function afterStop(
  state: EngineState,
  queue: QueueState,
  events: readonly StepEvent[],
  // What waited before this step: a message added in the step that heard the ending came after it.
  before: readonly StoredQueueItem[] = queue.view.items,
): { state: EngineState; queue: QueueState } {
  const stopped = events.some((e) => e.type === 'stop-pressed')
  const endings = (status: string) =>
    events.flatMap((e) =>
      e.type === 'turn-ended' && e.ending.status === status ? [e.ending.executionId] : [],
    )
  const failed = queue.sender && endings('error').length > 0
  if (queue.whenStopped === 'pause') {
    // The execution this tab stops (once known): its cancelled ending has paused the queue already.
    const stopping = state.stop?.kind === 'execution' ? state.stop.executionId : null
    let next = queue
    if (stopping !== null && !(queue.view.stopped ?? []).includes(stopping))
      next = change(next, { op: 'stopped', executionId: stopping })
    // A turn cancelled by a Stop this scope has not paused for (another tab's, not yet heard).
    const unheard = endings('cancelled').some((id) => !(next.view.stopped ?? []).includes(id))
    // The pause holds what waits now, and nothing queued later: with nothing waiting, it holds
    // nothing, and `queuePaused` is false [R-QUEUE-PAUSE-HOLDS-QUEUED].
    // Only what waited then: one on its way (sending) that comes back to the queue in this step,
    // its tab gone or its POST refused, was not waiting when the pause came (seed 214067841).
    const earlier = new Set(before.filter(waitsHere).map((item) => item.id))
    const waiting = next.view.items.filter(
      (item) => waitsHere(item) && !item.held && earlier.has(item.id),
    )
    if ((stopped || failed || (queue.sender && unheard)) && waiting.length > 0)
      next = change(next, { op: 'hold', ids: waiting.map((item) => item.id) })
    return { state, queue: next }
  }
  if (queue.whenStopped === 'draft' && (stopped || failed)) {
    const back = queue.view.items.filter(waitsHere)
    const texts = [state.draft, ...back.map((item) => item.text)]
    return {
      // The draft's change is stored by the post-step, as every change of it is.
      state: { ...state, draft: texts.filter((text) => text.trim() !== '').join('\n\n') },
      queue: change(queue, ...back.map((item): QueueChange => ({ op: 'done', id: item.id }))),
    }
  }
  return { state, queue }
}
