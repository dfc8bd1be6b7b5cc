import { createStore, type StoreApi } from 'zustand/vanilla'
import type {
  Step,
  Command,
  EngineAction,
  EngineConfig,
  EngineState,
  StopResult,
  SubmitResult,
  TurnEnding,
} from '../engine/model'
import { initialEngineState, reducerWith, serverRenderState } from '../engine/reduce'
import { createRunner, type Runner } from '../engine/runner'
import { selectSessionState, type SessionState } from '../engine/select'
import { markTruncated } from '../engine/transcript'
import { describeValue } from '../wire/contract/errors'
import type { ParseResult } from '../wire/contract/result'
import { checkSnapshot, type HistorySnapshot, type Suspension } from '../wire/contract/snapshot'
import type { ThreadKey } from '../wire/transport'
import type { ExtensionPart, ReadonlyStore, SessionContext } from './context'
import { createHistoryQuery, type HistoryQuery } from './historyQuery'
import { knownHere } from '../platform/environment'
import { lingering, type Lingering } from './linger'
import { createPerformer } from './performer'

/** One step through the reducer, as `session.inspect` shows it. */
export interface InspectedStep {
  action: EngineAction
  /** When it happened (ms since the epoch). */
  at: number
  commands: readonly Command[]
  state: EngineState
}

/**
 * One thread, followed: the recovery engine of the specification. It decides nothing: it is a
 * facade over the engine's one runner (`engine/runner.ts`), which feeds every action through the
 * reducer (`engine/reduce.ts`) and keeps the alarm the reducer asks for, and a performer of the
 * reducer's commands (requests, streams, relay, storage, outcomes: `effects/performer.ts`) that
 * reports what came of them — and whatever the host did (the query cache, a listener that threw)
 * — as actions. The runner holds the engine's state; the session keeps one store, the public view
 * selected from it at each step (`#publish`). It
 * is inert until its first subscriber arrives, so that creating it (twice, under React StrictMode)
 * costs nothing.
 */
export class PreviewChatSession {
  readonly key: ThreadKey
  /**
   * The public view as a read-only zustand store, for `useStore`/`useStoreWithEqualityFn`:
   * subscribing to it starts the session like `subscribe`; `getInitialState()` is the server
   * render's state.
   */
  readonly store: ReadonlyStore<SessionState>
  /** The engine's settings (what a trace of it records: `recordTrace` of `@preview-chat/core/internal`). */
  readonly config: EngineConfig
  readonly #ctx: SessionContext
  readonly #view: StoreApi<SessionState>
  /** The view's selector: the engine's state → the public `SessionState` (a part may add fields). */
  readonly #select: typeof selectSessionState
  readonly #runner: Runner
  /** The engine's state the view was last selected from. */
  #published: EngineState
  readonly #history: HistoryQuery
  readonly #activity: Lingering
  /** Outcomes owed to `submit()`, `resume()`, `stop()` and `refresh()` calls, by request id. */
  readonly #owed = new Map<number, (result: never) => void>()
  #requests = 0
  readonly #endings = new Set<(ending: TurnEnding) => void>()
  readonly #inspectors = new Set<(entry: InspectedStep) => void>()
  /** The snapshots taken, and what `markTruncated` made of each (`#take`). */
  readonly #marked = new WeakMap<HistorySnapshot, HistorySnapshot>()

  constructor(key: ThreadKey & { isNew?: boolean }, ctx: SessionContext) {
    this.key = { projectId: key.projectId, agentId: key.agentId, threadId: key.threadId }
    this.#ctx = ctx
    this.config = ctx.config
    const init = {
      key: this.key,
      tab: ctx.tab,
      draft: ctx.storage.getItem(ctx.draftKey) ?? '',
      draftSentAs: sentId(ctx.storage.getItem(`${ctx.draftKey}:sent`)),
      isNew: key.isNew ?? false,
      knownHere: knownHere(ctx.knownKey),
      live: ctx.keptLive ?? null,
      ...(ctx.server && { server: ctx.server }),
    }
    // Stale-while-revalidate: what the cache holds, checked, is the engine's first input.
    const cached = ctx.queryClient.getQueryData<unknown>(ctx.queryKey)
    const checked = cached === undefined ? null : this.#take(cached)
    const mounted: Extract<EngineAction, { type: 'mounted' }> = {
      type: 'mounted',
      cached: !checked
        ? { kind: 'none' }
        : checked.success
          ? { kind: 'snapshot', snapshot: checked.value, keptHere: ctx.isKept?.(cached) === true }
          : { kind: 'invalid', message: checked.error.message },
      ...this.#clock(),
    }
    const initial = initialEngineState(init)
    this.#published = initial
    // The server render shows what a server has too: the cache as the app filled it, not the
    // draft, nor what a reload kept in this browser's storage (so hydration matches it).
    // The client's parts: each wraps the engine, in the client's order, and has its side of the
    // host here (the relay's posts and listens; the queue's performs and adds to the view).
    const extensions = ctx.extensions ?? []
    const parts = extensions.map((extension) => extension.enginePart)
    const hosts: ExtensionPart[] = []
    for (const extension of extensions) {
      const host = extension.attach?.(this.#dispatch, ctx)
      if (host) hosts.push(host)
    }
    const select = hosts.find((host) => host.select)?.select ?? selectSessionState
    const serverState = serverRenderState(init, mounted, ctx.config, reducerWith(parts))
    this.#view = createStore<SessionState>()(() => select(serverState))
    this.#view.setState(select(initial), true)
    this.#select = select
    this.store = {
      getState: this.getState,
      getInitialState: this.getServerState,
      subscribe: this.subscribe,
    }
    this.#history = createHistoryQuery({
      queryClient: ctx.queryClient,
      queryKey: ctx.queryKey,
      // What the session shows (a kept transcript, the cache's): checked when taken, so a read's
      // answer that repeats its messages is not validated again.
      fetch: (signal) =>
        ctx.transport.readHistory(
          this.key,
          signal,
          this.#runner.getState().recorded,
          (capabilities) => this.#dispatch({ type: 'capabilities-heard', capabilities }),
        ),
      ...(key.isNew &&
        !cached && { initialData: { messages: [], openSuspensions: [], activeExecutionId: null } }),
      check: this.#take,
      dispatch: this.#dispatch,
      clock: this.#clock,
    })
    // The performer: the commands' side of the host, and its listening while followed.
    const { perform, activate } = createPerformer(
      this.key,
      ctx,
      this.#history,
      hosts,
      this.#dispatch,
      this.#owed,
      this.#endings,
      this.#now,
    )
    this.#runner = createRunner(
      initial,
      ctx.config,
      {
        now: this.#now,
        setTimer: (delay, ring) => {
          const handle = ctx.timers.setTimeout(ring, delay)
          return () => ctx.timers.clearTimeout(handle)
        },
        perform,
        onStep: this.#publish,
      },
      parts,
    )
    this.#activity = lingering(activate, ctx.timers, ctx.lingerMs)
    this.#dispatch(mounted)
  }

  /** The current state; the same object until something visible changes. */
  getState = (): SessionState => this.#view.getState()

  /** The state a server render shows (and hydration expects): no draft, which only the browser knows. */
  getServerState = (): SessionState => this.#view.getInitialState()

  /**
   * Every snapshot the session takes (its reads, a prefetch's, what the query cache holds): checked
   * (`checkSnapshot`, one lookup for a snapshot this client parsed) and its capped delegations
   * flagged (`truncated`, a flag of the client's view that the contract's schema does not keep).
   */
  #take = (value: unknown): ParseResult<HistorySnapshot> => {
    const checked = checkSnapshot(value, this.#ctx.transport.completeSnapshot)
    if (!checked.success) return checked
    // The same snapshot again (a 304) gives the same marked one: a capped delegation's copy would
    // otherwise be a new snapshot, and a new state, on every read.
    let marked = this.#marked.get(checked.value)
    if (!marked) {
      marked = markTruncated(checked.value, this.#ctx.config.delegationCharLimit)
      this.#marked.set(checked.value, marked)
    }
    return { success: true, value: marked }
  }

  /** The engine's internal state (`EngineState` of `@preview-chat/core/internal`), for tests and devtools. */
  getEngineState(): EngineState {
    return this.#runner.getState()
  }

  /**
   * Whether the session is started: something listens, or listened less than `lingerMs` ago. A
   * fact of the host (who subscribed), not of the engine's state.
   */
  get listened(): boolean {
    return this.#activity.isOpen
  }

  /**
   * Listens to state changes. The first subscriber starts the session (first read, push, resume
   * signals); when the last one leaves, it goes quiet after `lingerMs`, without cancelling anything
   * on the server.
   */
  subscribe = (listener: (state: SessionState, previous: SessionState) => void): (() => void) => {
    if (this.#runner.getState().disposed) return () => {}
    // A listener that throws (an app's analytics, say) is reported, and loses nothing: the
    // step's commands are performed all the same, and the other listeners are called.
    const unsubscribe = this.#view.subscribe((state, previous) => {
      try {
        listener(state, previous)
      } catch (cause) {
        this.#dispatch({ type: 'listener-threw', listener: 'state', message: describeValue(cause) })
      }
    })
    const release = this.#activity.acquire()
    return () => {
      unsubscribe()
      release()
    }
  }

  setDraft = (draft: string): void => {
    this.#dispatch({ type: 'draft-changed', draft })
  }

  /**
   * Sends `text` (or, without it, the draft) as a new message, through the gate: at most one turn
   * per thread. The draft is cleared when its message is accepted, unless it was edited since.
   * Anything but a string counts as no text, so `onClick={chat.submit}` sends the draft.
   */
  submit = (text?: string): Promise<SubmitResult> =>
    this.#ask((request) => ({
      type: 'submit-requested',
      request,
      text: typeof text === 'string' ? text : undefined,
      messageId: this.#ctx.newId(),
      at: this.#now(),
    }))

  /** Answers a suspension (e.g. `{ approved: true }`); the turn continues as a new execution. */
  resume = (
    suspension: Pick<Suspension, 'runId' | 'toolCallId'>,
    resumeData: unknown,
  ): Promise<SubmitResult> =>
    this.#ask((request) => ({
      type: 'resume-requested',
      request,
      runId: suspension.runId,
      toolCallId: suspension.toolCallId,
      resumeData,
      at: this.#now(),
    }))

  /**
   * Asks the server to stop the running turn, naming the execution known now (never "the
   * latest"). Repeated calls share one request and resolve alike; a Stop asked before
   * `execution-started` waits for its message's turn; a turn that is only suspended is cancelled
   * through its run.
   */
  stop = (): Promise<StopResult> =>
    this.#ask((request) => ({ type: 'stop-requested', request, at: this.#now() }))

  /**
   * Calls `listener` once for each turn this tab saw running (its own, another tab's, one
   * recovered after a reload) when the record shows how it ended; never for a turn that had
   * ended before this tab looked. Returns the function that stops listening.
   */
  onTurnEnd = (listener: (ending: TurnEnding) => void): (() => void) => {
    this.#endings.add(listener)
    return () => void this.#endings.delete(listener)
  }

  /**
   * Devtools: `listener` sees every action through the reducer, with the time, the commands it
   * returned and the state after it. Costs nothing while nobody inspects.
   */
  inspect = (listener: (entry: InspectedStep) => void): (() => void) => {
    this.#inspectors.add(listener)
    return () => void this.#inspectors.delete(listener)
  }

  /**
   * Starts the thread's first read now, before anything subscribes (e.g. before React renders, as
   * a route loader would): the session takes it as its first read. Nothing if it is listened to.
   * Resolves once the read on its way (this one, or one already there) has ended — answered,
   * failed or cancelled — or the session is disposed; at once when there is none (the thread was
   * read, or is new). Never rejects: a failed read is the session's `readError`.
   */
  prefetch = (): Promise<void> =>
    this.#ask((request) => ({ type: 'prefetch-requested', at: this.#now(), request }))

  /** Forgets the last failed action's `error` (e.g. once the person dismissed its banner). */
  clearError = (): void => {
    this.#dispatch({ type: 'error-cleared' })
  }

  /**
   * One history read now (or right after the one in flight), while the session is listened to;
   * resolves once reads settle. A session nobody listens to reads nothing (`prefetch()` is for
   * that), so it resolves at once (or once a prefetch's read on its way has ended), as it does
   * when the last listener leaves mid-read.
   */
  refresh = (): Promise<void> =>
    this.#ask((request) => ({ type: 'read-wanted', urgent: true, request }))

  /**
   * Stops reading and listening for good; what was under way resolves (`disposed`) and its
   * requests are aborted. On the spec's servers it never cancels the execution; on one where
   * closing a POST cancels its turn (released n8n 2.41, `server.keepsTurnOnDisconnect` false),
   * disposing while this tab streams a turn cancels that turn.
   */
  dispose = (): void => {
    if (this.#runner.getState().disposed) return
    this.#dispatch({ type: 'disposed' })
    this.#activity.close()
    this.#history.close()
    // The client hands out a fresh session for this thread from now on.
    this.#ctx.onIdle()
  }

  // --- wiring --------------------------------------------------------------------------------

  #now = () => this.#ctx.timers.now()
  #clock = () => ({ at: this.#now(), stampedAt: this.#ctx.now(), random: this.#ctx.random() })

  /** Dispatches the action `make` builds with a new request id, and waits for its outcome. */
  #ask<T>(make: (request: number) => EngineAction): Promise<T> {
    const request = ++this.#requests
    return new Promise<T>((resolve) => {
      this.#owed.set(request, resolve as (result: never) => void)
      this.#dispatch(make(request))
    })
  }

  #dispatch = (action: EngineAction): void => this.#runner.dispatch(action)

  /**
   * A step of the runner: the view selected from its state (the runner holds the engine's state,
   * the view store only what a UI reads: no store of the engine's state between them), the
   * devtools told.
   */
  #publish = (action: EngineAction, { state, commands }: Step): void => {
    if (state !== this.#published) {
      const previous = this.#published
      this.#published = state
      const view = this.#select(state, { engine: previous, view: this.#view.getState() })
      if (view !== this.#view.getState()) this.#view.setState(view, true)
    }
    if (this.#inspectors.size === 0) return
    const entry = { action, at: this.#ctx.now(), commands, state }
    for (const inspector of this.#inspectors) {
      try {
        inspector(entry)
      } catch {
        // A devtools listener that throws must not stop the engine.
      }
    }
  }
}

/** What storage holds as the draft's sent message id, checked: an id, or nothing. */
const sentId = (stored: string | null) =>
  stored !== null && /^[\w-]{1,100}$/.test(stored) ? stored : null
