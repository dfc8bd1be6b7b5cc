import type { QueryClient } from '@tanstack/query-core'
import type { LiveTurn } from '../engine/fold'
import type {
  Command,
  EngineAction,
  EngineConfig,
  EnginePart,
  EngineState,
  ServerTraits,
} from '../engine/model'
import type { SessionState } from '../engine/select'
import type { DraftStorage, ResumeSignal, Timers } from '../platform/environment'
import type { PushListener } from '../wire/pushSource'
import type { Transport } from '../wire/transport'

import type { ReadonlyStore } from '../platform/throttle'

export type { ReadonlyStore }

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
  /** This tab's id on the relay between tabs (the engine's `EngineState.tab`). */
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
  /**
   * Where this browser remembers that it followed the thread (`knownHere`), when the app says the
   * thread is new (`isNew`): read when the session is made (the engine decides whether the hint is
   * stale), written when it is first followed.
   */
  knownKey?: string
  /** What the app says the server can do (else learnt from its first turn). */
  server?: Partial<ServerTraits>
  /** Called once the session went quiet for good (so the client can forget it). */
  onIdle(): void
  /**
   * The parts the client has, in the order they wrap the engine: the released platform's
   * (`released`), the relay's (`relay`), the queue's (`queue`), each as its option brought it.
   */
  extensions?: readonly SessionExtension[]
}

/**
 * A part of the session, as every option that adds one brings it (`releasedPlatform()`,
 * `tabRelay()`, `queue()` of `@preview-chat/core/queue`): its part of the engine (`enginePart`, the
 * one shape of every part: it wraps the engine in the order the client lists the parts; the runner
 * ends each step with the engine's post-step), and, per session, its side of the host, which
 * performs the part's own commands, listens while the session is listened to and dispatches what
 * came of either, and may add its fields to the session's view.
 */
export interface SessionExtension {
  /** Its part of the engine: its wrapper, and its own due time (`EnginePart`). */
  readonly enginePart: EnginePart
  /** Its side of the host, for one session (absent: the part has none, as the released platform's). */
  attach?(dispatch: (action: EngineAction) => void, context: SessionContext): ExtensionPart
}

/** A session's side of a part: its commands' performer, what it listens to, its view's fields. */
export interface ExtensionPart {
  /** The view with the part's fields (the queue's); absent: the part adds none. */
  select?: ExtensionSelect
  /** Performs a command of the part's own; every other command it is handed, it leaves. */
  perform(command: Command): void
  /** While the session is listened to (the relay's: what the other tabs say); returns the cleanup. */
  listen?(): () => void
}

/**
 * A session's part of an extension, as the session sees it: its `selectSessionState`, which adds
 * the part's fields to the view (keeping the same object while nothing of it changed).
 */
export type ExtensionSelect = (
  state: EngineState,
  previous?: { engine: EngineState; view: SessionState },
) => SessionState
