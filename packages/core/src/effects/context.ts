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
import type { TabRelay } from './tabRelay'

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
  /** The channel to the other tabs of this origin, or null; and this tab's id on it. */
  relay: TabRelay | null
  /**
   * The engine's parts the client has, in the order they wrap the engine: the released platform's
   * (`released`), the relay's (`relay`); an extension's (`queue`) comes after them.
   */
  parts?: readonly EnginePart[]
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
  /** An opt-in part of the session (the queue: `PreviewChatClientOptions.queue`). */
  extension?: SessionExtension | undefined
}

/**
 * An opt-in part of the session (`queue()` of `@preview-chat/core/queue`): its part of the engine
 * (`enginePart`, the one shape of every part: it wraps the engine after the client's parts; the
 * runner ends each step with the engine's post-step), and, per session, its side of the host, which
 * performs the commands the session does not know (the part's own) and dispatches what came of
 * them; it adds its fields to the session's view.
 */
export interface SessionExtension {
  /** Its part of the engine: its wrapper, and its own due time (`EnginePart`). */
  readonly enginePart: EnginePart
  /** Its side of the host, for one session. */
  attach(dispatch: (action: EngineAction) => void, context: SessionContext): ExtensionPart
}

/** A session's side of an extension: its commands' performer, and its view's fields. */
export interface ExtensionPart {
  select: ExtensionSelect
  perform(command: Command): void
}

/**
 * A session's part of an extension, as the session sees it: its `selectSessionState`, which adds
 * the part's fields to the view (keeping the same object while nothing of it changed).
 */
export type ExtensionSelect = (
  state: EngineState,
  previous?: { engine: EngineState; view: SessionState },
) => SessionState
