import type { CheckContext } from '../context'

/**
 * One named check of one rule of `docs/rules.md`: a function of the check's context that returns
 * (a pass; a string it returns says what it saw) or throws `CheckFailure` / `NotApplicable`.
 */
export interface Check {
  /** The rule's id in `docs/rules.md`, e.g. `R-TURN-SURVIVES`. */
  rule: string
  /** What it checks, in one line. */
  name: string
  run(c: CheckContext): Promise<unknown>
}
