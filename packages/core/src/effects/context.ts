import type { QueryClient } from '@tanstack/query-core'
import type { StoreApi } from 'zustand/vanilla'
import type { DraftStorage, ResumeSignal, Timers } from '../platform/environment'
import type { PushListener } from '../wire/pushSource'
import type { PreviewChatSession } from './session'
import type { EngineAction, EngineConfig, EngineState, ServerTraits } from '../engine/state'
import type { RelayMessage, TabRelay } from './tabRelay'
import type { ThreadKey, Transport } from '../wire/transport'

/** A read-only zustand store: what `useStore` and `useStoreWithEqualityFn` take. */
export type ReadonlyStore<T> = Pick<StoreApi<T>, 'getState' | 'getInitialState' | 'subscribe'>

/** What a session needs from its client. */
export interface SessionContext {
  transport: Transport
  queryClient: QueryClient
  queryKey: readonly unknown[]
  /** Registers for the user's push messages; returns the function that unregisters. */
  listenToPush(listener: PushListener): () => void
  pushConnected(): boolean
  timers: Timers
  now(): number
  random(): number
  resumeSignal: ResumeSignal
  /** The channel to the other tabs of this origin, or null. */
  relay: TabRelay | null
  storage: DraftStorage
  draftKey: string
  config: EngineConfig
  /** How long a session with no subscriber keeps running before it goes quiet (StrictMode remounts). */
  lingerMs: number
  warn(message: string): void
  /** What the app says the server can do (else learnt from its first turn). */
  server?: Partial<ServerTraits>
  /** Called once the session went quiet for good (so the client can forget it). */
  onIdle(session: PreviewChatSession): void
}

/**
 * What a session lends the runners of its effects (its own turn, Stop, the tab relay): the state
 * to read, the one `dispatch` to change it, and the outside world. The runners decide nothing the
 * reducer could: they perform requests and report what came back.
 */
export interface SessionEffects {
  key: ThreadKey
  transport: Transport
  config: EngineConfig
  getState(): EngineState
  dispatch(action: EngineAction): void
  /** Resolves with the first state that satisfies `predicate` (or once the session goes quiet). */
  until(predicate: (state: EngineState) => boolean): Promise<EngineState>
  /** The scheduler's clock (`timers.now()`), and the wall clock that stamps messages. */
  at(): number
  stampedAt(): number
  sleep(ms: number): Promise<void>
  /** Tells the other tabs of this origin, when there is a relay. */
  relay(message: RelayMessage): void
  /** The id this thread goes by between tabs. */
  relayThread: string
  /** Reports a protocol oddity once. */
  warn(message: string): void
  /**
   * Closes this tab's own turn stream — on a server without Stop by execution id, that is how a
   * turn is stopped. Returns whether there was one to close.
   */
  closeOwnStream(): boolean
}
