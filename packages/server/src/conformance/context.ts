/**
 * What a check is given: the client, the agent's script, and the few steps every check is made of
 * (start a turn, read the record, wait for it to run or to end), each bounded by the check's
 * deadline. A check says what it expected and what it got (`CheckFailure`), or that it cannot run
 * against this server's agent (`NotApplicable`, with the reason).
 */
import {
  completeReleasedSnapshot,
  parseHistorySnapshot,
  type HistorySnapshot,
  type ParseResult,
  type TurnEvent,
} from '@preview-chat/core/contract'
import type { Answer, Caller, ConformanceClient, TurnStream } from './client'

/** A check found the server not doing what the contract says. */
export class CheckFailure extends Error {
  constructor(
    readonly expected: string,
    readonly got: string,
  ) {
    super(`expected ${expected}; got ${got}`)
  }
}

/** A check that cannot run here (the agent cannot do what it needs); never counted as a pass. */
export class NotApplicable extends Error {}

/**
 * Messages the server's agent answers in ways some checks need. Only the suite's one message that
 * any agent answers (`shortMessage`) is sent without one; a check that needs more is reported
 * not applicable, with the reason.
 */
export interface AgentScript {
  /** Names the script in the report. */
  name: string
  /** A message whose answer streams for longer than a check needs to act on it (several seconds). */
  longMessage?: string
  /** A message whose answer streams for a while (at least a second), then ends by itself. */
  boundedMessage?: string
  /**
   * A message whose turn suspends for a person, the `resumeData` that approves it, and optionally
   * one that approves it with an answer that streams for a second or more, then ends
   * (`approveBounded`: what R-TURN-SURVIVES-RESUME closes mid-answer; without it, `approve`,
   * whose answer may end before the check can act on it).
   */
  suspend?: { message: string; approve: unknown; approveBounded?: unknown }
  /** A message whose turn delegates more child text and reasoning than `limit` characters. */
  delegation?: { message: string; limit: number }
}

/** The reference server's scripted agent (`packages/server/src/agent.ts`). */
export const referenceScript: AgentScript = {
  name: 'reference',
  longMessage: '/long 100000',
  boundedMessage: '/long 200',
  suspend: {
    message: '/suspend',
    approve: { approved: true },
    approveBounded: { approved: true, long: 200 },
  },
  delegation: { message: '/delegate 5000', limit: 4000 },
}

/** A history read: the answer, the snapshot as the contract reads it, and as a client reads it. */
export interface Read {
  answer: Answer
  /** Core's parser with nothing filled in: the spec's snapshot, or why not. */
  strict: ParseResult<HistorySnapshot> | undefined
  /** What a client makes of it (the released n8n 2.41's gaps filled in); for state, not shape. */
  snapshot: HistorySnapshot | undefined
}

/** A turn this check started. */
export interface Turn {
  threadId: string
  stream: TurnStream
  /** Closes the POST stream (the client leaving). */
  close: () => void
  /** The first event, `message-queued` skipped. */
  first: TurnEvent | undefined
  /** From `execution-started`, or from the record when the server sends none. */
  executionId: string
}

/** Why a check needs the script's `longMessage`. */
export const longNeed = 'streams its answer for several seconds (--long-message)'

const pollMs = 25
/** How long the Stop of a turn a check leaves running may take. */
const cleanupMs = 2000

/** Options of one check's context. */
export interface CheckContextOptions {
  script: AgentScript
  /** The message of ordinary turns, which any agent answers. */
  shortMessage: string
  /** Aborted when the check's deadline passes, and once it has ended. */
  signal: AbortSignal
  /** The callers the run has credentials for. */
  callers: readonly Caller[]
}

/** What a check is given (`c` in the checks): the client and the steps checks are made of. */
export class CheckContext {
  readonly NotApplicable = NotApplicable
  readonly script: AgentScript
  readonly shortMessage: string
  readonly signal: AbortSignal
  /** What the check waits for now: said when its deadline passes. */
  waitingFor = ''
  private readonly cleanups: (() => Promise<void>)[] = []

  constructor(
    readonly client: ConformanceClient,
    private readonly options: CheckContextOptions,
  ) {
    this.script = options.script
    this.shortMessage = options.shortMessage
    this.signal = options.signal
  }

  fail(expected: string, got: string): never {
    throw new CheckFailure(expected, got)
  }

  /** Fails with `expected` and what `got` says when `condition` does not hold. */
  expect(condition: boolean, expected: string, got: () => string): void {
    if (!condition) this.fail(expected, got())
  }

  /** Whether the run was given credentials for `caller`. */
  hasCaller(caller: Caller): boolean {
    return caller === 'anonymous' || this.options.callers.includes(caller)
  }

  newThreadId(): string {
    return crypto.randomUUID()
  }

  /** What the script gives for `what`, or not applicable with the reason. */
  needs<K extends keyof AgentScript>(what: K, reason: string): NonNullable<AgentScript[K]> {
    const value = this.script[what]
    if (value === undefined || value === null) {
      throw new NotApplicable(`needs an agent that ${reason}`)
    }
    return value as NonNullable<AgentScript[K]>
  }

  /** A pause that the check's deadline cuts short. */
  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      this.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true })
    })
  }

  /** Polls until `value` gives something; the check's deadline ends the wait. */
  async poll<T>(what: string, value: () => Promise<T | undefined>): Promise<T> {
    this.waitingFor = what
    for (;;) {
      this.signal.throwIfAborted()
      const found = await value()
      if (found !== undefined) {
        this.waitingFor = ''
        return found
      }
      await this.sleep(pollMs)
    }
  }

  async read(caller: Caller, threadId: string): Promise<Read> {
    const answer = await this.client.request('GET', this.client.paths.messages(threadId), caller)
    if (answer.status !== 200) return { answer, strict: undefined, snapshot: undefined }
    const strict = parseHistorySnapshot(answer.json)
    const lenient = strict.success
      ? strict
      : parseHistorySnapshot(answer.json, undefined, completeReleasedSnapshot)
    return { answer, strict, snapshot: lenient.success ? lenient.value : undefined }
  }

  /** A read that must give a snapshot (a client's reading of it); fails with the answer else. */
  async snapshotOf(caller: Caller, threadId: string): Promise<HistorySnapshot> {
    const { answer, snapshot } = await this.read(caller, threadId)
    return snapshot ?? this.fail('a history snapshot', describe(answer))
  }

  ofExecution(snapshot: HistorySnapshot, executionId: string) {
    return snapshot.messages.filter((message) => message.executionId === executionId)
  }

  isRunning(snapshot: HistorySnapshot, executionId: string): boolean {
    return (
      snapshot.activeExecutionId === executionId ||
      this.ofExecution(snapshot, executionId).some((m) => m.executionStatus === 'running')
    )
  }

  hasEnded(snapshot: HistorySnapshot, executionId: string): boolean {
    return (
      this.ofExecution(snapshot, executionId).length > 0 && !this.isRunning(snapshot, executionId)
    )
  }

  /** Starts a turn and reads its first event; the execution id comes from it or from the record. */
  async startTurn(
    message: string,
    options: { caller?: Caller; threadId?: string; newSession?: boolean } = {},
  ): Promise<Turn> {
    const caller = options.caller ?? 'owner'
    const threadId = options.threadId ?? this.newThreadId()
    const known = new Set<string>()
    if (options.threadId) {
      const { snapshot } = await this.read(caller, threadId)
      for (const m of snapshot?.messages ?? []) known.add(m.executionId)
    }
    const body = {
      message,
      sessionId: threadId,
      ...(options.newSession !== false && { newSession: true }),
    }
    const posted = await this.client.turn(this.client.paths.chat, caller, body)
    if ('answer' in posted) {
      return this.fail('a turn stream (200, text/event-stream)', describe(posted.answer))
    }
    return this.begin(posted, threadId, caller, known)
  }

  /**
   * The first event of a posted turn, and its execution id: `execution-started`'s, or (a server
   * that sends none) the record's first execution that is not among `known`. A turn still running
   * when the check ends is stopped (by id) and its stream closed.
   */
  async begin(
    posted: { stream: TurnStream; close: () => void },
    threadId: string,
    caller: Caller,
    known: ReadonlySet<string>,
  ): Promise<Turn> {
    const { stream, close } = posted
    this.waitingFor = 'the first event of the turn stream'
    let first = await stream.next()
    if (first?.type === 'message-queued') first = await stream.next()
    this.waitingFor = ''
    const turn = { threadId, stream, close, first, executionId: '' }
    this.cleanups.push(async () => {
      if (turn.executionId && !stream.events.some(isTerminal)) {
        const path = this.client.paths.stop(threadId, turn.executionId)
        const signal = AbortSignal.timeout(cleanupMs)
        await this.client.request('DELETE', path, caller, { signal }).catch(() => undefined)
      }
      close()
    })
    if (first?.type === 'execution-started') turn.executionId = first.executionId
    else if (first?.type === 'error')
      this.fail('an accepted turn', `the in-band error ${json(first)}`)
    else if (first === undefined)
      this.fail('an accepted turn', 'a stream that closed with no event')
    else {
      turn.executionId = await this.poll('the execution id of the turn in its record', async () => {
        const { snapshot } = await this.read(caller, threadId)
        return snapshot?.messages.find((m) => !known.has(m.executionId))?.executionId
      })
    }
    return turn
  }

  /** Runs a turn of the short message to its end (every event read). */
  async fullTurn(options: { caller?: Caller; threadId?: string; newSession?: boolean } = {}) {
    const turn = await this.startTurn(this.shortMessage, options)
    this.waitingFor = 'the end of the turn stream'
    await turn.stream.rest()
    return turn
  }

  /** Waits until the record shows the turn running; not applicable if it ended already. */
  waitRunning(turn: Turn, caller: Caller = 'owner'): Promise<HistorySnapshot> {
    return this.poll('a read that shows the turn running', async () => {
      const { snapshot } = await this.read(caller, turn.threadId)
      if (snapshot && this.hasEnded(snapshot, turn.executionId)) {
        throw new NotApplicable(
          'needs an agent whose answer lasts longer: the turn ended before the check could act on it',
        )
      }
      return snapshot && this.isRunning(snapshot, turn.executionId) ? snapshot : undefined
    })
  }

  /** A turn of the script's long message, once the record shows it running. */
  async longTurn(options: { threadId?: string; newSession?: boolean } = {}): Promise<Turn> {
    const message = this.needs(
      'longMessage',
      'streams its answer for several seconds (--long-message)',
    )
    const turn = await this.startTurn(message, options)
    await this.waitRunning(turn)
    return turn
  }

  /**
   * Closes the POST stream of a turn the record shows running (the client leaving), and expects
   * the turn to go on and end recorded as a success.
   */
  async expectSurvivesClose(turn: Turn): Promise<void> {
    await this.waitRunning(turn)
    turn.close()
    const snapshot = await this.waitEnded(turn.threadId, turn.executionId)
    const statuses = this.ofExecution(snapshot, turn.executionId).map((m) => m.executionStatus)
    this.expect(
      statuses.every((status) => status === 'success'),
      'the turn recorded as success after its stream was closed',
      () => json(statuses),
    )
  }

  /** Waits until the record shows the execution ended. */
  waitEnded(threadId: string, executionId: string, caller: Caller = 'owner') {
    return this.poll(`a read that shows execution ${executionId} ended`, async () => {
      const { snapshot } = await this.read(caller, threadId)
      return snapshot && this.hasEnded(snapshot, executionId) ? snapshot : undefined
    })
  }

  /** Stops the turns the check left running and closes their streams. */
  async cleanup(): Promise<void> {
    await Promise.allSettled(this.cleanups.splice(0).map((step) => step()))
  }
}

export const isTerminal = (event: TurnEvent) =>
  event.type === 'done' || event.type === 'error' || event.type === 'tool-call-suspended'

/** An answer, briefly: its status, content type and the start of its body. */
export function describe(answer: Answer): string {
  const type = answer.headers.get('content-type') ?? 'no content type'
  const text = answer.text.replace(/\s+/g, ' ')
  const body = text.length > 200 ? `${text.slice(0, 200)}…` : text
  return `${answer.status} (${type}) ${body}`.trim()
}

export const json = (value: unknown) => JSON.stringify(value)
