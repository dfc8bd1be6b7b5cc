/**
 * What a main needs to run beside others on a shared store and bus, in one place: the bus's push
 * made harmless to a turn (a publish that fails is reported, never thrown into the turn or the
 * route), and the main's lease kept with the orphan sweep, whose ended turns are announced on the
 * bus so that every tab of their threads reads the end and the gate reopens.
 */
import type { PreviewChatBus } from './bus/types'
import { startLeaseKeeper } from './store/lease-keeper'
import type { PreviewChatStore } from './store/types'
import { announceExecution } from './threads'

/** What went wrong in the background of a main of a deployment (nothing a request waits for). */
export type DeploymentErrorEvent =
  /** A push message could not be published (the bus is away): the record still has it. */
  | 'push_failed'
  /** The lease could not be renewed or the orphans swept (the store is away): tried next period. */
  | 'lease_failed'

/** Hears `DeploymentErrorEvent`s with their error. */
export type DeploymentErrorListener = (event: DeploymentErrorEvent, error: unknown) => void

/**
 * `bus` whose `publish` never rejects: a push message is a hint to re-read the record ("push plus
 * refetch"), so a bus that is away must not break the turn or the request that publishes it.
 * `cancel` still rejects (a Stop must never be taken as accepted when it was not relayed).
 */
export function guardedBus(bus: PreviewChatBus, report: DeploymentErrorListener): PreviewChatBus {
  return {
    publish: (userId, message) =>
      bus.publish(userId, message).catch((error: unknown) => report('push_failed', error)),
    subscribe: (userId, listener) => bus.subscribe(userId, listener),
    register: (mainId, cancel) => bus.register(mainId, cancel),
    cancel: (mainId, executionId) => bus.cancel(mainId, executionId),
  }
}

/** A main's lease, renewed with the orphan sweep every period. */
export interface MainLease {
  /** The first renewal done (or failed and reported): a main admits turns after it. */
  readonly ready: Promise<void>
  /** Stops renewing and sweeping; the lease then lapses. */
  stop(): Promise<void>
}

/**
 * Renews `mainId`'s lease in `store` every `periodMs` (a lease lasts three periods) and ends the
 * turns of mains whose lease lapsed (`instance_lost`), telling each ended turn's thread on `bus`.
 */
export function startMainLease(options: {
  store: PreviewChatStore
  bus: PreviewChatBus
  mainId: string
  periodMs: number
  report: DeploymentErrorListener
}): MainLease {
  const { store, bus, mainId, periodMs, report } = options
  const keeper = startLeaseKeeper({
    store,
    mainId,
    leaseMs: periodMs,
    onSweep: (ended) => {
      for (const execution of ended) {
        const thread = { ...execution, id: execution.threadId }
        void announceExecution({ bus }, thread, execution.id)
      }
    },
    onError: (error) => report('lease_failed', error),
    timers: {
      // Unreferenced: a main's lease never keeps a process alive by itself.
      setTimeout: (run, ms) => {
        const handle = setTimeout(run, ms)
        ;(handle as { unref?: () => void }).unref?.()
        return handle
      },
      clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    },
  })
  return keeper
}
