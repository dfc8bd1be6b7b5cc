import type { QueryClient } from '@tanstack/query-core'
import type { StoreApi } from 'zustand/vanilla'
import type { LiveTurn } from '../engine/fold'
import type {
  Command,
  EngineAction,
  EngineConfig,
  EngineState,
  Reducer,
  ServerTraits,
} from '../engine/model'
import type { SessionState } from '../engine/select'
import type { DraftStorage, ResumeSignal, Timers } from '../platform/environment'
import type { PushListener } from '../wire/pushSource'
import type { ThreadKey, Transport } from '../wire/transport'
import type { TabRelay } from './tabRelay'

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
  /** A fresh UUID: each message's client id (`messageId`). */
  newId(): string
  resumeSignal: ResumeSignal
  /** The channel to the other tabs of this origin, or null; and this tab's id on it. */
  relay: TabRelay | null
  tab: string
  storage: DraftStorage
  draftKey: string
  config: EngineConfig
  /** How long a session with no subscriber keeps running before it goes quiet (StrictMode remounts). */
  lingerMs: number
  warn(message: string): void
  /** A running turn's live view kept across a reload, and where to keep it (`persistTranscripts`). */
  keptLive?: LiveTurn | null
  keepLive?(turn: LiveTurn | null): void
  /** Whether the cache's value is a transcript persistence restored (only this browser has it). */
  isKept?(data: unknown): boolean
  /** The reducer's `forget-kept`: persistence forgets what it kept of this thread. */
  forgetKept?(): void
  /** What the app says the server can do (else learnt from its first turn). */
  server?: Partial<ServerTraits>
  /** Called once the session went quiet for good (so the client can forget it). */
  onIdle(): void
  /** An opt-in part of the session (the queue): its reducer, and its side of the host. */
  extension?: { reducer: Reducer; part: ExtensionPart }
}

/**
 * What an opt-in part of the engine (`queue()` of `@preview-chat/core/queue`) is, per session: the
 * effects of its own commands, and its part of the session's view. Its decisions are its reducer's.
 */
export interface ExtensionPart {
  /** Called once the session is made: `dispatch` takes the part's actions to the reducer. */
  start(dispatch: (action: EngineAction) => void): void
  /** Performs one of its own commands: `true`, or `false` for a command that is not its own. */
  perform(command: Command): boolean
  /** The session's view with the part's own fields (the same object while they did not change). */
  view(state: EngineState, view: SessionState): SessionState
  /** While the session is followed; returns the function that ends it. */
  follow(): () => void
  /** The session is disposed. */
  close(): void
}

/** An opt-in part of every session of a client: `PreviewChatClientOptions.queue`. */
export interface SessionExtension {
  reducer: Reducer
  attach(session: {
    key: ThreadKey
    scope: string
    tab: string
    warn(message: string): void
    now(): number
  }): ExtensionPart
}
