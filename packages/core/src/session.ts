import type { QueryClient } from '@tanstack/query-core'
import { createStore, type StoreApi } from 'zustand/vanilla'
import type { TurnEvent } from './contract/events'
import type { HistorySnapshot, Suspension } from './contract/snapshot'
import { backoffDelay, type DraftStorage, type ResumeSignal, type Timers } from './environment'
import { inBandError, PreviewChatError } from './errors'
import type { PushListener } from './pushSource'
import type { RelayMessage, TabRelay } from './tabRelay'
import {
  initialEngineState,
  reduce,
  selectActiveExecutionId,
  selectSessionState,
  type EngineAction,
  type EngineState,
  type SessionState,
} from './state'
import { markTruncated } from './transcript'
import { readTurnStream, type ThreadKey, type Transport } from './transport'

/** Retries of a failed read while nothing runs (while a turn runs, reads retry without end). */
const IDLE_READ_RETRIES = 3

/** The outcome of `submit()` and `resume()`. */
export type SubmitResult =
  /** The server recorded the turn (`execution-started`); it now runs whatever this tab does. */
  | { outcome: 'accepted'; executionId: string }
  /** A turn runs, a submission is under way, or the thread's state is not known yet: nothing was sent. */
  | { outcome: 'busy' }
  /** Not accepted; the draft is kept. `error.code` says why (e.g. `turn_already_running`). */
  | { outcome: 'failed'; error: PreviewChatError }

/** The outcome of `stop()`. `cancelRequested: true` means accepted, not ended: the record says when. */
export interface StopResult {
  cancelRequested: boolean
  error?: PreviewChatError
}

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
  resumeSignal: ResumeSignal
  /** The channel to the other tabs of this origin, or null. */
  relay: TabRelay | null
  storage: DraftStorage | null
  draftKey: string
  delegationCharLimit: number
  retry: { baseMs: number; maxMs: number }
  poll: { baseMs: number; maxMs: number }
  /** The shortest time between the starts of two reads (a refresh skips it). */
  minReadIntervalMs: number
  /** How long a Stop asked before `execution-started` waits for the execution id. */
  stopWaitMs: number
  /** How long a session with no subscriber keeps running before it goes quiet (StrictMode remounts). */
  lingerMs: number
  /** Called once the session went quiet for good (so the client can forget it). */
  onIdle(session: PreviewChatSession): void
}

/**
 * One thread, followed: the recovery engine of the specification. All state changes go through
 * `reduce`; this class performs the effects (requests, timers, push, storage) that the state asks
 * for. It is inert until its first subscriber arrives, so that creating it (twice, under React
 * StrictMode) costs nothing.
 */
export class PreviewChatSession {
  readonly key: ThreadKey
  readonly #ctx: SessionContext
  readonly #store: StoreApi<EngineState>
  #view: { engine: EngineState; view: SessionState }
  readonly #serverState: SessionState
  #listeners = 0
  #active = false
  #disposed = false
  #lingerTimer: unknown
  #cleanups: (() => void)[] = []

  // Reads: at most one in flight and one queued behind it.
  #reading = false
  #readQueued = false
  #readFailures = 0
  #readWaiters: (() => void)[] = []
  #lastReadAt = Number.NEGATIVE_INFINITY
  #gapTimer: unknown
  #polls = 0
  #pushLost = false
  #followUpTimer: unknown

  #stream: AbortController | null = null
  /** Relay bookkeeping: the id this thread goes by between tabs, and the event counters. */
  readonly #relayThread: string
  #relaySeq = 0
  #relayed: { executionId: string; seq: number } | null = null
  #syncAsked: string | null = null
  #stopping: Promise<StopResult> | null = null
  #executionWaiters: ((executionId: string | null) => void)[] = []

  constructor(key: ThreadKey & { isNew?: boolean }, ctx: SessionContext) {
    this.key = { projectId: key.projectId, agentId: key.agentId, threadId: key.threadId }
    this.#ctx = ctx
    this.#relayThread = JSON.stringify([key.projectId, key.agentId, key.threadId])
    const draft = ctx.storage?.getItem(ctx.draftKey) ?? ''
    const initial = initialEngineState({ draft, isNew: key.isNew ?? false })
    // Stale-while-revalidate: a cached snapshot shows at once; the gate waits for a fresh read.
    const cached = ctx.queryClient.getQueryData<HistorySnapshot>(ctx.queryKey)
    const engine = cached
      ? reduce(initial, { type: 'snapshot', snapshot: cached, fresh: false, at: ctx.now() }, ctx)
      : initial
    this.#store = createStore<EngineState>()(() => engine)
    this.#view = { engine, view: selectSessionState(engine) }
    this.#serverState = selectSessionState({ ...engine, draft: '' })
    this.#store.subscribe((next, previous) => {
      if (next.draft !== previous.draft) this.#persistDraft(next.draft)
    })
  }

  /** The current state; the same object until something changes. */
  getState = (): SessionState => {
    const engine = this.#store.getState()
    if (engine !== this.#view.engine)
      this.#view = { engine, view: selectSessionState(engine, this.#view) }
    return this.#view.view
  }

  /**
   * The state a server render shows (and hydration expects): the cached transcript, if any, but
   * not the draft, which only the browser's storage knows.
   */
  getServerState = (): SessionState => this.#serverState

  /** The engine's internal state, for tests and devtools. */
  getEngineState(): EngineState {
    return this.#store.getState()
  }

  /**
   * Listens to state changes. The first subscriber starts the session (first read, push, resume
   * signals); when the last one leaves, it goes quiet after `lingerMs`, without cancelling anything
   * on the server.
   */
  subscribe = (listener: (state: SessionState) => void): (() => void) => {
    const unsubscribe = this.#store.subscribe(() => listener(this.getState()))
    this.#listeners++
    this.#ctx.timers.clearTimeout(this.#lingerTimer)
    this.#activate()
    let subscribed = true
    return () => {
      if (!subscribed) return
      subscribed = false
      unsubscribe()
      if (--this.#listeners > 0) return
      this.#lingerTimer = this.#ctx.timers.setTimeout(() => {
        if (this.#listeners === 0) {
          this.#deactivate()
          this.#ctx.onIdle(this)
        }
      }, this.#ctx.lingerMs)
    }
  }

  setDraft = (draft: string): void => {
    this.#dispatch({ type: 'draft-changed', draft })
  }

  /** Sends the draft as a new message, through the gate: at most one turn per thread. */
  submit = async (): Promise<SubmitResult> => {
    const view = this.getState()
    if (view.status !== 'idle' || this.#disposed) return { outcome: 'busy' }
    const text = view.draft
    if (text.trim() === '') {
      return {
        outcome: 'failed',
        error: new PreviewChatError(
          'invalid_request',
          'The draft is empty; type a message before sending.',
        ),
      }
    }
    const engine = this.#store.getState()
    // A thread with no readable history is new: its first message creates it.
    const isNew = !engine.recorded || engine.recorded.messages.length === 0
    this.#dispatch({ type: 'submit-started', text })
    return this.#runTurn(
      {
        kind: 'message',
        body: {
          message: text,
          sessionId: this.key.threadId,
          ...(isNew && { newSession: true as const }),
        },
      },
      text,
    )
  }

  /** Answers a suspension (e.g. `{ approved: true }`); the turn continues as a new execution. */
  resume = async (
    suspension: Pick<Suspension, 'runId' | 'toolCallId'>,
    resumeData: unknown,
  ): Promise<SubmitResult> => {
    if (this.getState().status !== 'idle' || this.#disposed) return { outcome: 'busy' }
    this.#dispatch({ type: 'resume-started', toolCallId: suspension.toolCallId })
    return this.#runTurn(
      {
        kind: 'resume',
        body: { runId: suspension.runId, toolCallId: suspension.toolCallId, resumeData },
      },
      undefined,
    )
  }

  /**
   * Asks the server to stop the running turn, naming the execution known now (never "the
   * latest"). Repeated calls share one request; a Stop asked before `execution-started` waits for
   * it; a turn that is only suspended is cancelled through its run.
   */
  stop = (): Promise<StopResult> => {
    this.#stopping ??= this.#runStop().finally(() => {
      this.#stopping = null
    })
    return this.#stopping
  }

  /** Forgets the last failed action's `error` (e.g. once the person dismissed its banner). */
  clearError = (): void => {
    this.#dispatch({ type: 'error-cleared' })
  }

  /** One history read now (or right after the one in flight); resolves once reads settle. */
  refresh = (): Promise<void> => {
    this.#requestRead(true)
    if (!this.#reading && !this.#readQueued) return Promise.resolve()
    return new Promise((resolve) => this.#readWaiters.push(resolve))
  }

  /** Stops reading and listening for good. Never cancels the server's execution. */
  dispose = (): void => {
    if (this.#disposed) return
    this.#disposed = true
    this.#ctx.timers.clearTimeout(this.#lingerTimer)
    this.#deactivate()
    // The client hands out a fresh session for this thread from now on.
    this.#ctx.onIdle(this)
  }

  // --- effects -------------------------------------------------------------------------------

  #dispatch(action: EngineAction): void {
    if (this.#disposed) return
    this.#store.setState(reduce(this.#store.getState(), action, this.#ctx), true)
  }

  #activate(): void {
    if (this.#active || this.#disposed) return
    this.#active = true
    this.#cleanups = [
      this.#ctx.listenToPush({
        onMessage: ({ data }) => {
          if (
            data.projectId === this.key.projectId &&
            data.agentId === this.key.agentId &&
            data.threadId === this.key.threadId
          ) {
            this.#requestRead()
          }
        },
        onConnectionChange: (connected) => {
          if (!connected) {
            this.#pushLost = true
            this.#scheduleFollowUp()
            return
          }
          this.#polls = 0
          // Notifications sent while the channel was down are lost: read once. (Not on the first
          // connection: the read that started this session covers it.)
          if (this.#pushLost) this.#requestRead()
          else this.#scheduleFollowUp() // push is here now: polling can stop
          this.#pushLost = false
        },
      }),
      this.#ctx.resumeSignal(() => this.#requestRead()),
      this.#ctx.relay?.listen((message) => this.#onRelay(message)) ?? (() => {}),
    ]
    // Spec: "After a reload or disconnect, the client reads the recorded transcript."
    if (!this.#store.getState().synced || this.#store.getState().cut) this.#requestRead()
    else if (selectActiveExecutionId(this.#store.getState())) this.#requestRead()
  }

  #deactivate(): void {
    if (!this.#active) return
    this.#active = false
    for (const cleanup of this.#cleanups.splice(0)) cleanup()
    this.#ctx.timers.clearTimeout(this.#followUpTimer)
    this.#ctx.timers.clearTimeout(this.#gapTimer)
    this.#gapTimer = undefined
    this.#readQueued = false
    for (const resolve of this.#readWaiters.splice(0)) resolve()
    // A read in flight is cancelled (its request aborted), not left to finish for nobody.
    if (this.#reading) void this.#ctx.queryClient.cancelQueries({ queryKey: this.#ctx.queryKey })
    // Stop reading the live stream; the turn goes on on the server and is recovered on return.
    this.#stream?.abort()
    this.#stream = null
    for (const waiter of this.#executionWaiters.splice(0)) waiter(null)
    // Coming back must read again: what happened meanwhile is only in the record.
    this.#dispatch({ type: 'paused' })
  }

  /**
   * Asks for a read. At most one is in flight and one queued behind it; and reads start at least
   * `minReadIntervalMs` apart (unless `urgent`), so a burst of notifications about a turn whose
   * snapshots are recorded in batches costs two reads, however fast the server answers.
   */
  #requestRead(urgent = false): void {
    if (!this.#active || this.#disposed) return
    const engine = this.#store.getState()
    // This tab's own stream is newer than any batch: read when it ends.
    if (engine.streaming || engine.submitting !== null || this.#reading) {
      this.#readQueued = true
      return
    }
    const wait = urgent
      ? 0
      : this.#lastReadAt + this.#ctx.minReadIntervalMs - this.#ctx.timers.now()
    if (wait > 0) {
      this.#readQueued = true
      this.#gapTimer ??= this.#ctx.timers.setTimeout(() => {
        this.#gapTimer = undefined
        this.#requestRead(true)
      }, wait)
      return
    }
    void this.#read()
  }

  async #read(): Promise<void> {
    this.#reading = true
    this.#readQueued = false
    this.#lastReadAt = this.#ctx.timers.now()
    this.#ctx.timers.clearTimeout(this.#followUpTimer)
    this.#ctx.timers.clearTimeout(this.#gapTimer)
    this.#gapTimer = undefined
    const { queryClient, queryKey, transport, delegationCharLimit } = this.#ctx
    try {
      await queryClient.fetchQuery({
        queryKey,
        queryFn: async ({ signal }) =>
          markTruncated(await transport.readHistory(this.key, signal), delegationCharLimit),
        staleTime: 0,
        retry: false,
        // Offline is ours to handle (a failed read keeps the last state, retries, and the online
        // signal reads again); TanStack's default would pause the read without a word.
        networkMode: 'always',
      })
      // The cache's copy is structurally shared with the previous one: unchanged messages keep
      // their identity, so memoised message components do not re-render.
      const snapshot = queryClient.getQueryData<HistorySnapshot>(queryKey)
      this.#readFailures = 0
      if (snapshot && this.#active)
        this.#dispatch({ type: 'snapshot', snapshot, fresh: true, at: this.#ctx.now() })
    } catch (cause) {
      this.#readFailures++
      const error = PreviewChatError.isInstance(cause)
        ? cause
        : new PreviewChatError('invalid_response', `The history read failed: ${String(cause)}`, {
            cause,
          })
      if (this.#active) this.#dispatch({ type: 'read-failed', error })
    } finally {
      this.#reading = false
    }
    if (this.#readQueued) this.#requestRead()
    if (this.#reading || this.#readQueued) return
    for (const resolve of this.#readWaiters.splice(0)) resolve()
    this.#scheduleFollowUp()
  }

  /**
   * After a failed read: retry with bounded backoff while anything is unknown or running, and a
   * few times even when nothing runs, so a passing fault does not leave a stale `readError` (a 404
   * is an answer, not a failure to retry). After a good one: poll while an execution runs and no
   * push channel is connected, so the thread still converges; and poll while the record lags
   * behind a turn this tab saw live, since the notification of its last batch may already have
   * been spent on an earlier read.
   */
  #scheduleFollowUp(): void {
    if (!this.#active || this.#reading) return
    this.#ctx.timers.clearTimeout(this.#followUpTimer)
    const engine = this.#store.getState()
    if (engine.streaming || engine.submitting !== null) return
    const running = selectActiveExecutionId(engine) !== null || engine.stop !== null
    const recordLags = engine.live?.ended === true
    let delay: number | null = null
    if (
      engine.readError &&
      engine.readError.code !== 'not_found' &&
      (running ||
        recordLags ||
        engine.cut ||
        !engine.synced ||
        this.#readFailures <= IDLE_READ_RETRIES)
    ) {
      delay = backoffDelay(this.#readFailures - 1, this.#ctx.retry.baseMs, this.#ctx.retry.maxMs)
    } else if (recordLags || (running && !this.#ctx.pushConnected())) {
      delay = backoffDelay(this.#polls++, this.#ctx.poll.baseMs, this.#ctx.poll.maxMs)
    } else {
      this.#polls = 0
    }
    if (delay !== null)
      this.#followUpTimer = this.#ctx.timers.setTimeout(() => this.#requestRead(), delay)
  }

  async #runTurn(
    request: Parameters<Transport['openTurn']>[1],
    message: string | undefined,
  ): Promise<SubmitResult> {
    const controller = new AbortController()
    this.#stream = controller
    let body: ReadableStream<Uint8Array>
    try {
      body = await this.#ctx.transport.openTurn(this.key, request, controller.signal)
    } catch (cause) {
      const error = PreviewChatError.isInstance(cause)
        ? cause
        : new PreviewChatError('network_error', String(cause), { cause })
      this.#dispatch({ type: 'submit-failed', error })
      // No answer at all: the server may still have taken it. Find out; never send it again.
      if (error.code === 'network_error' || error.code === 'server_error')
        this.#dispatch({ type: 'stream-cut' })
      this.#afterStream()
      return { outcome: 'failed', error }
    }

    return new Promise<SubmitResult>((resolve) => {
      let started = false
      /** Before `execution-started`: the first event decides whether the turn was accepted. */
      const onFirst = (event: TurnEvent) => {
        if (event.type === 'execution-started') {
          started = true
          this.#dispatch({
            type: 'turn-started',
            executionId: event.executionId,
            sessionId: event.sessionId,
            at: new Date(this.#ctx.now()).toISOString(),
            ...(message !== undefined && { message }),
          })
          for (const waiter of this.#executionWaiters.splice(0)) waiter(event.executionId)
          this.#relaySeq = 0
          this.#relayTurn()
          resolve({ outcome: 'accepted', executionId: event.executionId })
          return
        }
        // Refused before it started: nothing was recorded. The draft stays.
        const error =
          event.type === 'error'
            ? inBandError(event)
            : new PreviewChatError(
                'invalid_response',
                `The turn stream began with "${event.type}" instead of "execution-started".`,
              )
        this.#dispatch({ type: 'submit-failed', error })
        controller.abort()
        resolve({ outcome: 'failed', error })
      }
      const onEvents = (events: TurnEvent[]) => {
        let rest = events
        if (!started) {
          const [first, ...others] = events
          if (first) onFirst(first)
          if (!started) return
          rest = others
        }
        if (rest.length === 0) return
        this.#dispatch({ type: 'turn-events', events: rest })
        this.#relayOwn({
          kind: 'events',
          thread: this.#relayThread,
          executionId: this.#store.getState().live?.executionId ?? '',
          seq: ++this.#relaySeq,
          events: rest,
        })
      }
      void readTurnStream(body, onEvents, controller.signal).then((end) => {
        if (this.#stream === controller) this.#stream = null
        for (const waiter of this.#executionWaiters.splice(0)) waiter(null)
        if (end.kind === 'cut') {
          this.#dispatch({ type: 'stream-cut' })
          if (!started) resolve({ outcome: 'failed', error: end.error })
        } else {
          this.#dispatch({ type: 'stream-closed' })
          if (!started) {
            resolve({
              outcome: 'failed',
              error: new PreviewChatError(
                'disposed',
                'The session was disposed before the server accepted the message.',
              ),
            })
          }
        }
        this.#afterStream()
      })
    })
  }

  /** A stream ended, was cut or refused: read the record (this also runs reads deferred meanwhile). */
  #afterStream(): void {
    this.#readQueued = false
    this.#requestRead()
  }

  async #runStop(): Promise<StopResult> {
    const engine = this.#store.getState()
    let executionId = selectActiveExecutionId(engine)
    if (!executionId && engine.submitting !== null) {
      // Asked before the execution id is known: hold it until `execution-started` (bounded).
      this.#dispatch({ type: 'stop-requested', executionId: null })
      executionId = await this.#waitForExecution()
      if (!executionId) {
        this.#dispatch({ type: 'stop-abandoned' })
        this.#requestRead()
        return { cancelRequested: false }
      }
    }
    if (!executionId) return this.#cancelSuspendedRuns()

    this.#dispatch({ type: 'stop-requested', executionId })
    try {
      const answer = await this.#ctx.transport.stopExecution(this.key, executionId)
      this.#dispatch({
        type: 'stop-answered',
        executionId,
        cancelRequested: answer.cancelRequested,
      })
      this.#requestRead()
      return answer
    } catch (cause) {
      const error = cause as PreviewChatError
      this.#dispatch({ type: 'stop-failed', error })
      this.#requestRead()
      return { cancelRequested: false, error }
    }
  }

  /** Spec: "Suspended turns use the existing checkpoint cancellation path." */
  async #cancelSuspendedRuns(): Promise<StopResult> {
    const runIds = [
      ...new Set(this.getState().openSuspensions.map((suspension) => suspension.runId)),
    ]
    if (runIds.length === 0) return { cancelRequested: false }
    try {
      const answers = await Promise.all(
        runIds.map((runId) => this.#ctx.transport.cancelRun(this.key, runId)),
      )
      this.#requestRead()
      return { cancelRequested: answers.some((answer) => answer.cancelled) }
    } catch (cause) {
      const error = cause as PreviewChatError
      this.#dispatch({ type: 'stop-failed', error })
      return { cancelRequested: false, error }
    }
  }

  #waitForExecution(): Promise<string | null> {
    return new Promise((resolve) => {
      const timer = this.#ctx.timers.setTimeout(() => {
        this.#executionWaiters = this.#executionWaiters.filter((waiter) => waiter !== settle)
        resolve(null)
      }, this.#ctx.stopWaitMs)
      const settle = (executionId: string | null) => {
        this.#ctx.timers.clearTimeout(timer)
        resolve(executionId)
      }
      this.#executionWaiters.push(settle)
    })
  }

  /** Tells the other tabs the whole live turn (on start, and when one of them asks). */
  #relayTurn(): void {
    const live = this.#store.getState().live
    if (live)
      this.#relayOwn({ kind: 'turn', thread: this.#relayThread, turn: live, seq: this.#relaySeq })
  }

  #relayOwn(message: RelayMessage): void {
    if (this.#active) this.#ctx.relay?.post(message)
  }

  #onRelay(message: RelayMessage): void {
    if (message.thread !== this.#relayThread) return
    const engine = this.#store.getState()
    switch (message.kind) {
      case 'sync':
        if (engine.streaming && engine.live?.executionId === message.executionId) this.#relayTurn()
        return
      case 'turn':
        this.#dispatch({ type: 'relayed-turn', turn: message.turn })
        // Taken only if the record has not overtaken it; else events wait for a later sync.
        if (this.#store.getState().live?.executionId === message.turn.executionId) {
          this.#relayed = { executionId: message.turn.executionId, seq: message.seq }
          this.#syncAsked = null
        }
        return
      case 'events':
        if (engine.streaming) return
        if (
          engine.live?.executionId === message.executionId &&
          this.#relayed?.executionId === message.executionId &&
          this.#relayed.seq === message.seq - 1
        ) {
          this.#relayed.seq = message.seq
          this.#dispatch({ type: 'relayed-events', events: message.events })
        } else if (this.#syncAsked !== message.executionId) {
          // Joined mid-turn or missed an event: ask the streaming tab for the whole turn.
          this.#syncAsked = message.executionId
          this.#ctx.relay?.post({
            kind: 'sync',
            thread: this.#relayThread,
            executionId: message.executionId,
          })
        }
        return
    }
  }

  #persistDraft(draft: string): void {
    try {
      if (draft) this.#ctx.storage?.setItem(this.#ctx.draftKey, draft)
      else this.#ctx.storage?.removeItem(this.#ctx.draftKey)
    } catch {
      // A full or forbidden storage must not break typing; the draft lives on in memory.
    }
  }
}
