/**
 * Runs the checks one after the other against a live server, each within its own deadline, and
 * says of each: pass, fail, known limit (a failure the platform's profile declares) or not
 * applicable (with the reason). Nothing here knows the server: it speaks HTTP through `fetch`.
 */
import { checks as allChecks, type Check } from './checks/index'
import { createClient, type ConformanceTarget } from './client'
import { CheckContext, CheckFailure, NotApplicable, type AgentScript } from './context'
import { platformProfiles, type PlatformName } from './flavors'

export type Outcome = 'pass' | 'fail' | 'known-limit' | 'not-applicable'

/** What one check found. */
export interface CheckResult {
  rule: string
  check: string
  outcome: Outcome
  /** What it saw on a pass; expected and got on a failure; the reason otherwise. */
  detail: string
}

/** A check's result, and whether a failure is the server's answer (not a deadline, no answer). */
type Found = CheckResult & { answered?: true }

export interface ConformanceOptions {
  /** The REST base (`http://host:4317/rest`); a URL with no path gets the contract's `/rest`. */
  baseUrl: string
  /** `p1` and `a1` by default (any id does on the reference server). */
  projectId?: string
  agentId?: string
  /** Request headers naming the thread's owner, another user, and a user with `agent:read` only. */
  credentials: ConformanceTarget['credentials']
  /** The platform's declared limits; `spec` (none) by default. */
  flavor?: PlatformName
  /** What the server's agent can be asked to do; checks that need more are not applicable. */
  script?: AgentScript
  /** Run only the checks of these rule ids. */
  only?: readonly string[]
  /** Each check's deadline, 20 s by default; the run ends within the checks' deadlines. */
  timeoutMs?: number
  /** The message of ordinary turns. */
  shortMessage?: string
  fetch?: typeof fetch
  /** Hears each result as it comes (a progress line). */
  onResult?: (result: CheckResult) => void
  /** The checks to run; the suite's own by default. */
  checks?: readonly Check[]
}

export interface ConformanceReport {
  baseUrl: string
  flavor: PlatformName
  script: string
  results: CheckResult[]
  /** True when no check failed. */
  ok: boolean
}

/** The REST base of `url`: `/rest` (the contract's default) when the URL names no path. */
export function restBase(url: string): string {
  const parsed = new URL(url)
  return parsed.pathname === '/' ? `${parsed.origin}/rest` : url.replace(/\/+$/, '')
}

export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const flavor = options.flavor ?? 'spec'
  const profile = platformProfiles[flavor]
  const script = options.script ?? { name: 'none' }
  const only = options.only && new Set(options.only)
  const selected = (options.checks ?? allChecks).filter((check) => !only || only.has(check.rule))
  const target: ConformanceTarget = {
    baseUrl: restBase(options.baseUrl),
    projectId: options.projectId ?? 'p1',
    agentId: options.agentId ?? 'a1',
    credentials: options.credentials,
    fetch: options.fetch ?? fetch,
  }
  const results: CheckResult[] = []
  for (const check of selected) {
    const { answered, ...result } = await runCheck(
      check,
      {
        ...target,
        ...('pushQuery' in profile && { pushQuery: profile.pushQuery() }),
      },
      {
        script,
        shortMessage: options.shortMessage ?? 'Hello from the preview-chat conformance suite.',
        timeoutMs: options.timeoutMs ?? 20_000,
      },
    )
    const limit = (profile.limits as Record<string, string | undefined>)[check.rule]
    // Only what the server answered can be its declared limit: no answer at all is a failure.
    const reported =
      result.outcome === 'fail' && limit && answered
        ? { ...result, outcome: 'known-limit' as const, detail: `${limit}. Seen: ${result.detail}` }
        : result
    results.push(reported)
    options.onResult?.(reported)
  }
  return {
    baseUrl: target.baseUrl,
    flavor,
    script: script.name,
    results,
    ok: results.every((result) => result.outcome !== 'fail'),
  }
}

async function runCheck(
  check: Check,
  target: ConformanceTarget,
  options: { script: AgentScript; shortMessage: string; timeoutMs: number },
): Promise<Found> {
  const controller = new AbortController()
  const callers = (['owner', 'other', 'readOnly'] as const).filter((c) => target.credentials[c])
  const c = new CheckContext(createClient(target, controller.signal), {
    ...options,
    signal: controller.signal,
    callers,
  })
  const result = (outcome: Outcome, detail: string): CheckResult => ({
    rule: check.rule,
    check: check.name,
    outcome,
    detail,
  })
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<'deadline'>((resolve) => {
    timer = setTimeout(() => resolve('deadline'), options.timeoutMs)
  })
  try {
    const passed = await Promise.race([check.run(c), deadline])
    if (passed === 'deadline') {
      return result(
        'fail',
        `expected the check to end within ${options.timeoutMs} ms; got no end while waiting for ${c.waitingFor || 'an answer'}`,
      )
    }
    return result('pass', typeof passed === 'string' ? passed : '')
  } catch (error) {
    if (error instanceof NotApplicable) return result('not-applicable', error.message)
    if (error instanceof CheckFailure) return { ...result('fail', error.message), answered: true }
    const message = reasonOf(error)
    return result(
      'fail',
      `expected an answer; got ${message}${c.waitingFor ? ` (waiting for ${c.waitingFor})` : ''}`,
    )
  } finally {
    clearTimeout(timer)
    await c.cleanup()
    controller.abort()
  }
}

/** What went wrong with a request, with its cause (`fetch failed`: ECONNREFUSED, …). */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error ? error.cause : undefined
  const code = (cause as { code?: unknown } | undefined)?.code
  return cause
    ? `${error.message} (${typeof code === 'string' ? code : cause.message})`
    : error.message
}
