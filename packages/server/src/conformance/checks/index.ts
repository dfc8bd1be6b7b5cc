import { accessChecks } from './access'
import type { Check } from './check'
import { recordChecks } from './record'
import { stopChecks } from './stop'
import { suspendChecks } from './suspend'
import { turnChecks } from './turns'

export type { Check } from './check'

/** Every check of the suite, in the order it runs them. */
export const checks: readonly Check[] = [
  ...turnChecks,
  ...recordChecks,
  ...stopChecks,
  ...accessChecks,
  ...suspendChecks,
]
