/**
 * The loop each main runs beside its store (any `PreviewChatStore`): renew its lease, then end the
 * orphans of mains that stopped renewing theirs, every `leaseMs`. A lease lasts `3 × leaseMs`, so a
 * main survives two failed renewals (the platform's "at most 2 failed renewals") and a dead main's
 * turns end within about four periods of its last renewal.
 */
import type { ExecutionRecord, OrphanEnd, PreviewChatStore } from './types'

/** What `startLeaseKeeper` keeps, and whom it tells. */
export interface LeaseKeeperOptions {
  store: Pick<PreviewChatStore, 'renewLease' | 'endOrphaned'>
  mainId: string
  /** The period of renewals and sweeps (default 10 s); a lease lasts three. */
  leaseMs?: number
  /** How the orphans end (default: `instance_lost`, with a message fit for the user). */
  orphanEnd?: OrphanEnd
  /** After each sweep, the executions it ended (often none): tell their threads. */
  onSweep?: (ended: ExecutionRecord[]) => void
  /** A renewal or sweep failed (e.g. `store_unavailable`): the next period tries again. */
  onError?: (error: unknown) => void
  timers?: {
    setTimeout: (run: () => void, ms: number) => unknown
    clearTimeout: (handle: unknown) => void
  }
}

/** A main's running lease loop. */
export interface LeaseKeeper {
  /** The first renewal and sweep done (or failed, told to `onError`). */
  readonly ready: Promise<void>
  /** Stops renewing (the lease then lapses unless the main starts again) and sweeping. */
  stop(): Promise<void>
}

/** How a dead main's turns end by default: `error`, code `instance_lost`. */
export const instanceLost: OrphanEnd = {
  error: 'The server running this turn stopped before the turn ended. Send the message again.',
  errorCode: 'instance_lost',
}

/**
 * Starts renewing `mainId`'s lease and sweeping orphans now and every `leaseMs`, one beat after the
 * other (never two at once). Await `ready` before the main admits turns.
 */
export function startLeaseKeeper(options: LeaseKeeperOptions): LeaseKeeper {
  const { store, mainId, leaseMs = 10_000, orphanEnd = instanceLost } = options
  const timers = options.timers ?? {
    setTimeout: (run: () => void, ms: number) => setTimeout(run, ms),
    clearTimeout: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  }
  let stopped = false
  let handle: unknown
  const beat = async () => {
    try {
      await store.renewLease(mainId, leaseMs * 3)
      const ended = await store.endOrphaned(orphanEnd)
      options.onSweep?.(ended)
    } catch (error) {
      options.onError?.(error)
    }
  }
  let current = beat()
  const next = () => {
    if (stopped) return
    handle = timers.setTimeout(() => {
      current = beat().then(next)
    }, leaseMs)
  }
  const ready = current.then(next)
  return {
    ready,
    async stop() {
      stopped = true
      timers.clearTimeout(handle)
      await current
    },
  }
}
