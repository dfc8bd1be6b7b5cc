import type { InspectedStep, PreviewChatSession, SessionStatus } from '@preview-chat/core'
import type { EngineState } from '@preview-chat/core/internal'
import { countActivity, describeStep, noActivity, type Activity, type LoggedStep } from './describe'
import { createRing } from './ring'

/** What the panel shows of one session: its last steps, its traffic, its state. */
export interface SessionLogView {
  steps: readonly LoggedStep[]
  activity: Activity
  status: SessionStatus
  engine: EngineState
}

export interface SessionLog {
  getView(): SessionLogView
  /** The first listener starts inspecting the session, the last one's leaving stops it. */
  subscribe(listener: () => void): () => void
}

/** How often the panel re-renders at most while actions stream in (a turn's deltas are many). */
const FLUSH_MS = 50

/**
 * Keeps the last `limit` steps of `session` (a ring: older ones drop out) while someone listens,
 * through `session.inspect` (which neither starts the session nor keeps it alive). Listeners hear
 * of new steps at most every 50 ms. Creating it costs nothing: it inspects from its first listener
 * on (the devtools listen from their mount, so the log holds what happened before it was opened).
 */
export function createSessionLog(session: PreviewChatSession, limit: number): SessionLog {
  const steps = createRing<LoggedStep>(limit)
  let seq = 0
  let activity = noActivity
  const current = (): SessionLogView => ({
    steps: steps.toArray(),
    activity,
    status: session.getState().status,
    engine: session.getEngineState(),
  })
  let view = current()
  let timer: ReturnType<typeof setTimeout> | null = null
  const listeners = new Set<() => void>()

  const flush = () => {
    timer = null
    view = current()
    for (const listener of listeners) listener()
  }
  const record = (step: InspectedStep) => {
    seq += 1
    steps.push(describeStep(step, seq))
    activity = countActivity(activity, step)
    timer ??= setTimeout(flush, FLUSH_MS)
  }
  let stop: (() => void) | null = null

  return {
    getView: () => view,
    subscribe(listener) {
      listeners.add(listener)
      if (!stop) {
        stop = session.inspect(record)
        // What changed while nobody listened (React reads the view again after subscribing).
        view = current()
      }
      return () => {
        listeners.delete(listener)
        if (listeners.size > 0) return
        stop?.()
        stop = null
        if (timer) clearTimeout(timer)
        timer = null
      }
    },
  }
}

/** The logs of many sessions, one each, made on first ask and kept by session (a `WeakMap`). */
export function createSessionLogs(limit: number): { of(session: PreviewChatSession): SessionLog } {
  const logs = new WeakMap<PreviewChatSession, SessionLog>()
  return {
    of(session) {
      let log = logs.get(session)
      if (!log) logs.set(session, (log = createSessionLog(session, limit)))
      return log
    },
  }
}
