import type { QueryClient } from '@tanstack/query-core'
import { createStore, type StoreApi } from 'zustand/vanilla'
import type { HistorySnapshot, Suspension } from './contract/snapshot'
import type { DraftStorage, ResumeSignal, Timers } from './environment'
import { PreviewChatError, toPreviewChatError } from './errors'
import { createHistoryQuery, type HistoryQuery } from './historyQuery'
import { lingering, type Lingering } from './linger'
import { runOwnTurn, type SubmitResult } from './ownTurn'
import type { PushListener } from './pushSource'
import { nextDeadline, nextRead } from './schedule'
import {
  initialEngineState,
  reduce,
  selectSessionState,
  type EngineAction,
  type EngineConfig,
  type EngineState,
  type SessionState,
} from './state'
import { runStop, type StopResult } from './stop'
import type { RelayMessage, TabRelay } from './tabRelay'
import { markTruncated } from './transcript'
import type { ThreadKey, Transport, TurnRequest } from './transport'

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
  /** Called once the session went quiet for good (so the client can forget it). */
  onIdle(session: PreviewChatSession): void
}

/**
 * One thread, followed: the recovery engine of the specification. It only wires things together:
 * every decision is the reducer's (`state.ts`) or the scheduler's (`schedule.ts`), both pure
 * functions of the engine state; this class performs what they ask for (requests, timers, push,
 * relay, storage). It is inert until its first subscriber arrives, so that creating it (twice,
 * under React StrictMode) costs nothing.
 */
export class PreviewChatSession {
  readonly key: ThreadKey
  /**
   * The public view as a read-only zustand store, for `useStore`/`useStoreWithEqualityFn`:
   * subscribing to it starts the session like `subscribe`; `getInitialState()` is the server
   * render's state.
   */
  readonly store: ReadonlyStore<SessionState>
  readonly #ctx: SessionContext
  readonly #engine: StoreApi<EngineState>
  readonly #view: StoreApi<SessionState>
  readonly #history: HistoryQuery
  readonly #activity: Lingering
  readonly #relayThread: string
  readonly #streams = new Set<AbortController>()
  #tokens = 0
  #alarm: { at: number; handle: unknown } | null = null
  #stopping: Promise<StopResult> | null = null
  #disposed = false

  constructor(key: ThreadKey & { isNew?: boolean }, ctx: SessionContext) {
    this.key = { projectId: key.projectId, agentId: key.agentId, threadId: key.threadId }
    this.#ctx = ctx
    this.#relayThread = JSON.stringify([key.projectId, key.agentId, key.threadId])
    const initial = initialEngineState({
      draft: ctx.storage.getItem(ctx.draftKey) ?? '',
      isNew: key.isNew ?? false,
    })
    // Stale-while-revalidate: a cached snapshot shows at once; the gate waits for a fresh read.
    const cached = ctx.queryClient.getQueryData<HistorySnapshot>(ctx.queryKey)
    const engine = cached
      ? reduce(initial, this.#snapshot(cached, false, false), ctx.config)
      : initial
    this.#engine = createStore<EngineState>()(() => engine)
    // The server render shows the cached transcript, not the draft that only the browser knows.
    this.#view = createStore<SessionState>()(() => selectSessionState({ ...engine, draft: '' }))
    this.#view.setState(selectSessionState(engine), true)
    this.store = {
      getState: this.getState,
      getInitialState: this.getServerState,
      subscribe: this.subscribe,
    }
    this.#engine.subscribe((next, previous) => {
      const view = selectSessionState(next, { engine: previous, view: this.#view.getState() })
      if (view !== this.#view.getState()) this.#view.setState(view, true)
      if (next.draft !== previous.draft) this.#persistDraft(next.draft)
    })
    this.#history = createHistoryQuery({
      queryClient: ctx.queryClient,
      queryKey: ctx.queryKey,
      fetch: async (signal) =>
        markTruncated(
          await ctx.transport.readHistory(this.key, signal),
          ctx.config.delegationCharLimit,
        ),
      ...(key.isNew &&
        !cached && { initialData: { messages: [], openSuspensions: [], activeExecutionId: null } }),
      events: {
        started: () => this.#dispatch({ type: 'read-started', at: ctx.timers.now() }),
        cancelled: () => this.#dispatch({ type: 'read-cancelled' }),
        failed: (cause) =>
          this.#dispatch({
            type: 'read-failed',
            error: toPreviewChatError(cause, 'invalid_response', 'The history read failed'),
            at: ctx.timers.now(),
            random: ctx.random(),
          }),
        snapshot: (snapshot, fromRead) => this.#dispatch(this.#snapshot(snapshot, true, fromRead)),
      },
    })
    this.#activity = lingering(() => this.#activate(), ctx.timers, ctx.lingerMs)
  }

  /** The current state; the same object until something visible changes. */
  getState = (): SessionState => this.#view.getState()

  /** The state a server render shows (and hydration expects): no draft, which only the browser knows. */
  getServerState = (): SessionState => this.#view.getInitialState()

  /** The engine's internal state, for tests and devtools. */
  getEngineState(): EngineState {
    return this.#engine.getState()
  }

  /**
   * Listens to state changes. The first subscriber starts the session (first read, push, resume
   * signals); when the last one leaves, it goes quiet after `lingerMs`, without cancelling anything
   * on the server.
   */
  subscribe = (listener: (state: SessionState, previous: SessionState) => void): (() => void) => {
    if (this.#disposed) return () => {}
    const unsubscribe = this.#view.subscribe(listener)
    const release = this.#activity.acquire()
    return () => {
      unsubscribe()
      release()
    }
  }

  setDraft = (draft: string): void => {
    this.#dispatch({ type: 'draft-changed', draft })
  }

  /** Sends the draft as a new message, through the gate: at most one turn per thread. */
  submit = async (): Promise<SubmitResult> => {
    const { status, draft } = this.getState()
    if (status !== 'idle' || this.#disposed) return { outcome: 'busy' }
    if (draft.trim() === '') {
      const error = new PreviewChatError(
        'invalid_request',
        'The draft is empty; type a message before sending.',
      )
      return { outcome: 'failed', error }
    }
    // A thread with no readable history is new: its first message creates it.
    const recorded = this.#engine.getState().recorded
    const newSession = !recorded || recorded.messages.length === 0
    const token = ++this.#tokens
    this.#dispatch({ type: 'submit-started', token, text: draft, at: this.#ctx.timers.now() })
    const body = {
      message: draft,
      sessionId: this.key.threadId,
      ...(newSession && { newSession: true as const }),
    }
    return this.#runTurn({ kind: 'message', body }, token)
  }

  /** Answers a suspension (e.g. `{ approved: true }`); the turn continues as a new execution. */
  resume = async (
    suspension: Pick<Suspension, 'runId' | 'toolCallId'>,
    resumeData: unknown,
  ): Promise<SubmitResult> => {
    if (this.getState().status !== 'idle' || this.#disposed) return { outcome: 'busy' }
    const token = ++this.#tokens
    const { runId, toolCallId } = suspension
    this.#dispatch({ type: 'resume-started', token, toolCallId, at: this.#ctx.timers.now() })
    return this.#runTurn({ kind: 'resume', body: { runId, toolCallId, resumeData } }, token)
  }

  /**
   * Asks the server to stop the running turn, naming the execution known now (never "the
   * latest"). Repeated calls share one request; a Stop asked before `execution-started` waits for
   * it; a turn that is only suspended is cancelled through its run.
   */
  stop = (): Promise<StopResult> => {
    this.#stopping ??= runStop({
      key: this.key,
      transport: this.#ctx.transport,
      getState: () => this.#engine.getState(),
      dispatch: (action) => this.#dispatch(action),
      until: (predicate) => this.#until(predicate),
      sleep: (ms) => new Promise((resolve) => this.#ctx.timers.setTimeout(resolve, ms)),
      now: () => this.#ctx.timers.now(),
      openSuspensions: () => this.getState().openSuspensions,
      maxRetryAfterMs: this.#ctx.config.retry.maxMs,
    }).finally(() => {
      this.#stopping = null
    })
    return this.#stopping
  }

  /** Forgets the last failed action's `error` (e.g. once the person dismissed its banner). */
  clearError = (): void => {
    this.#dispatch({ type: 'error-cleared' })
  }

  /** One history read now (or right after the one in flight); resolves once reads settle. */
  refresh = async (): Promise<void> => {
    this.#dispatch({ type: 'read-wanted', urgent: true })
    await this.#until((s) => !s.active || (!s.reads.inFlight && !s.reads.wanted))
  }

  /** Stops reading and listening for good. Never cancels the server's execution. */
  dispose = (): void => {
    if (this.#disposed) return
    this.#activity.close()
    this.#disposed = true
    // The client hands out a fresh session for this thread from now on.
    this.#ctx.onIdle(this)
  }

  // --- wiring --------------------------------------------------------------------------------

  #dispatch(action: EngineAction): void {
    if (this.#disposed) return
    this.#engine.setState(reduce(this.#engine.getState(), action, this.#ctx.config), true)
    this.#wake()
  }

  /**
   * Does what the scheduler says is due now, and sets one alarm for what is due later. `dueAt`:
   * the alarm's time, which has come even if the clock reads a hair earlier.
   */
  #wake(dueAt = Number.NEGATIVE_INFINITY): void {
    const state = this.#engine.getState()
    const now = Math.max(this.#ctx.timers.now(), dueAt)
    const deadline = nextDeadline(state, this.#ctx.config)
    if (deadline !== null && deadline <= now) return this.#dispatch({ type: 'tick', at: now })
    const readAt = nextRead(state, this.#ctx.config)
    if (readAt !== null && readAt <= now) return this.#history.read()
    const due = Math.min(deadline ?? Infinity, readAt ?? Infinity)
    if (this.#alarm && this.#alarm.at <= due) return
    if (this.#alarm) this.#ctx.timers.clearTimeout(this.#alarm.handle)
    this.#alarm = null
    if (due === Infinity) return
    const handle = this.#ctx.timers.setTimeout(() => {
      this.#alarm = null
      this.#wake(due)
    }, due - now)
    this.#alarm = { at: due, handle }
  }

  #until(predicate: (state: EngineState) => boolean): Promise<EngineState> {
    return new Promise((resolve) => {
      if (predicate(this.#engine.getState())) return resolve(this.#engine.getState())
      const stop = this.#engine.subscribe((state) => {
        if (!predicate(state) && state.active && !this.#disposed) return
        stop()
        resolve(state)
      })
    })
  }

  #snapshot(snapshot: HistorySnapshot, fresh: boolean, fromRead: boolean): EngineAction {
    const { timers, now, random } = this.#ctx
    return {
      type: 'snapshot',
      snapshot,
      fresh,
      fromRead,
      at: timers.now(),
      stampedAt: now(),
      random: random(),
    }
  }

  #activate(): () => void {
    const ctx = this.#ctx
    const cleanups = [
      ctx.listenToPush({
        onMessage: ({ data }) => {
          const { projectId, agentId, threadId } = this.key
          if (
            data.projectId === projectId &&
            data.agentId === agentId &&
            data.threadId === threadId
          )
            this.#dispatch({ type: 'read-wanted', urgent: false })
        },
        onConnectionChange: (connected) =>
          this.#dispatch({
            type: 'push-changed',
            connected,
            at: ctx.timers.now(),
            random: ctx.random(),
          }),
      }),
      ctx.resumeSignal(() => this.#dispatch({ type: 'read-wanted', urgent: false })),
      ctx.relay?.listen((message) => this.#onRelay(message)) ?? (() => {}),
    ]
    this.#dispatch({ type: 'activated', at: ctx.timers.now(), pushConnected: ctx.pushConnected() })
    cleanups.push(this.#history.observe())
    return () => {
      for (const cleanup of cleanups) cleanup()
      if (this.#alarm) ctx.timers.clearTimeout(this.#alarm.handle)
      this.#alarm = null
      // A read in flight is cancelled (its request aborted), not left to finish for nobody; the
      // live stream stops being read, while the turn goes on on the server.
      if (this.#engine.getState().reads.inFlight) this.#history.cancel()
      for (const stream of this.#streams) stream.abort()
      this.#dispatch({ type: 'deactivated' })
      ctx.onIdle(this)
    }
  }

  async #runTurn(request: TurnRequest, token: number): Promise<SubmitResult> {
    const controller = new AbortController()
    this.#streams.add(controller)
    try {
      return await runOwnTurn(
        {
          key: this.key,
          transport: this.#ctx.transport,
          getState: () => this.#engine.getState(),
          dispatch: (action) => this.#dispatch(action),
          until: (predicate) => this.#until(predicate),
          at: () => this.#ctx.timers.now(),
          stampedAt: () => this.#ctx.now(),
          relay: (message) => this.#ctx.relay?.post(message),
          relayThread: this.#relayThread,
          warn: this.#ctx.warn,
        },
        request,
        token,
        controller.signal,
      )
    } finally {
      this.#streams.delete(controller)
    }
  }

  /** Another tab's live turn, followed token by token (the reducer decides what to take). */
  #onRelay(message: RelayMessage): void {
    if (message.thread !== this.#relayThread) return
    const before = this.#engine.getState()
    const { own, live } = before
    if (message.kind === 'sync') {
      // A tab that joined mid-turn asks for the whole of the turn this tab streams.
      if (own?.phase === 'streaming' && live?.executionId === message.executionId)
        this.#ctx.relay?.post({
          kind: 'turn',
          thread: this.#relayThread,
          turn: live,
          seq: own.batches,
        })
      return
    }
    this.#dispatch({ type: 'relay-received', message, stampedAt: this.#ctx.now() })
    const { syncAsked } = this.#engine.getState()
    if (syncAsked && syncAsked !== before.syncAsked)
      this.#ctx.relay?.post({ kind: 'sync', thread: this.#relayThread, executionId: syncAsked })
  }

  #persistDraft(draft: string): void {
    if (draft) this.#ctx.storage.setItem(this.#ctx.draftKey, draft)
    else this.#ctx.storage.removeItem(this.#ctx.draftKey)
  }
}
