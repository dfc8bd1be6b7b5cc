import { createStore, type StoreApi } from 'zustand/vanilla'
import { createAlarm, type Alarm } from './alarm'
import type { HistorySnapshot, Suspension } from '../wire/contract/snapshot'
import type { ReadonlyStore, SessionContext, SessionEffects } from './context'
import { PreviewChatError } from '../wire/contract/errors'
import { createHistoryQuery, snapshotAction, type HistoryQuery } from './historyQuery'
import { lingering, type Lingering } from './linger'
import { runOwnTurn, type SubmitResult } from './ownTurn'
import { nextDeadline, nextRead } from '../engine/schedule'
import { selectSessionState, type SessionState } from '../engine/select'
import { initialEngineState, reduce, type EngineAction, type EngineState } from '../engine/state'
import { runStop, type StopResult } from './stop'
import { followRelay } from './tabRelay'
import { markTruncated } from '../engine/transcript'
import type { ThreadKey, TurnRequest } from '../wire/transport'

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
  readonly #effects: SessionEffects
  /** The open turn streams of this tab, by their POST's token. */
  readonly #streams = new Map<number, AbortController>()
  #tokens = 0
  readonly #alarm: Alarm
  #disposed = false

  constructor(key: ThreadKey & { isNew?: boolean }, ctx: SessionContext) {
    this.key = { projectId: key.projectId, agentId: key.agentId, threadId: key.threadId }
    this.#ctx = ctx
    const clock = {
      at: () => ctx.timers.now(),
      stampedAt: () => ctx.now(),
      random: () => ctx.random(),
    }
    this.#effects = {
      key: this.key,
      transport: ctx.transport,
      config: ctx.config,
      getState: () => this.#engine.getState(),
      dispatch: (action) => this.#dispatch(action),
      until: (predicate) => this.#until(predicate),
      at: clock.at,
      stampedAt: clock.stampedAt,
      sleep: (ms) => new Promise((resolve) => ctx.timers.setTimeout(resolve, ms)),
      relay: (message) => ctx.relay?.post(message),
      relayThread: JSON.stringify([key.projectId, key.agentId, key.threadId]),
      warn: ctx.warn,
      closeOwnStream: () => {
        const token = this.#engine.getState().own?.token
        const stream = token === undefined ? undefined : this.#streams.get(token)
        stream?.abort()
        return stream !== undefined
      },
    }
    const initial = initialEngineState({
      draft: ctx.storage.getItem(ctx.draftKey) ?? '',
      isNew: key.isNew ?? false,
      ...(ctx.server && { server: ctx.server }),
    })
    // Stale-while-revalidate: a cached snapshot shows at once; the gate waits for a fresh read.
    const cached = ctx.queryClient.getQueryData<HistorySnapshot>(ctx.queryKey)
    const engine = cached
      ? reduce(initial, snapshotAction(cached, 'cache', clock), ctx.config)
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
      if (next.draft === previous.draft) return
      if (next.draft) ctx.storage.setItem(ctx.draftKey, next.draft)
      else ctx.storage.removeItem(ctx.draftKey)
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
      dispatch: this.#effects.dispatch,
      clock,
    })
    this.#activity = lingering(() => this.#activate(), ctx.timers, ctx.lingerMs)
    this.#alarm = createAlarm(ctx.timers, (due) => this.#wake(due))
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
  stop = (): Promise<StopResult> => runStop(this.#effects)

  /** Forgets the last failed action's `error` (e.g. once the person dismissed its banner). */
  clearError = (): void => {
    this.#dispatch({ type: 'error-cleared' })
  }

  /** One history read now (or right after the one in flight); resolves once reads settle. */
  refresh = async (): Promise<void> => {
    this.#dispatch({ type: 'read-wanted', urgent: true })
    await this.#until((s) => !s.active || (!s.reads.inFlight && !s.reads.wanted))
  }

  /**
   * Stops reading and listening for good. On the spec's servers it never cancels the execution;
   * on one where closing a POST cancels its turn (released n8n 2.41, `server.keepsTurnOnDisconnect`
   * false), disposing while this tab streams a turn cancels that turn.
   */
  dispose = (): void => {
    if (this.#disposed) return
    // Explicit: the streams close even where that cancels the turn (documented).
    for (const stream of this.#streams.values()) stream.abort()
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

  /** Does what the scheduler says is due now, and sets the alarm for what is due later. */
  #wake(dueAt?: number): void {
    const state = this.#engine.getState()
    // The alarm's time has come, even if the clock reads a hair earlier.
    const now = Math.max(this.#ctx.timers.now(), dueAt ?? Number.NEGATIVE_INFINITY)
    const deadline = nextDeadline(state, this.#ctx.config)
    if (deadline !== null && deadline <= now) return this.#dispatch({ type: 'tick', at: now })
    const readAt = nextRead(state, this.#ctx.config)
    if (readAt !== null && readAt <= now) return this.#history.read()
    this.#alarm.set(Math.min(deadline ?? Infinity, readAt ?? Infinity), now)
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
            this.#dispatch({ type: 'push-message' })
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
      ctx.relay?.listen((message) => followRelay(message, this.#effects)) ?? (() => {}),
    ]
    this.#dispatch({ type: 'activated', at: ctx.timers.now(), pushConnected: ctx.pushConnected() })
    cleanups.push(this.#history.observe())
    return () => {
      for (const cleanup of cleanups) cleanup()
      this.#alarm.clear()
      // A read in flight is cancelled (its request aborted), not left to finish for nobody; the
      // live stream stops being read, while the turn goes on on the server.
      if (this.#engine.getState().reads.inFlight) this.#history.cancel()
      // Where a closed POST cancels the turn (released n8n), or nobody knows yet, the stream is
      // read to its end instead: only Stop or dispose() may cancel a person's turn.
      if (this.#engine.getState().server.keepsTurnOnDisconnect === true)
        for (const stream of this.#streams.values()) stream.abort()
      this.#dispatch({ type: 'deactivated' })
      ctx.onIdle(this)
    }
  }

  async #runTurn(request: TurnRequest, token: number): Promise<SubmitResult> {
    const controller = new AbortController()
    this.#streams.set(token, controller)
    return runOwnTurn(this.#effects, request, token, controller.signal, () =>
      this.#streams.delete(token),
    )
  }
}
