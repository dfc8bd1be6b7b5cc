/**
 * `@preview-chat/server/conformance`: the conformance suite of the preview-chat contract, a
 * black-box checker of a live server over HTTP (`npx preview-chat-conformance <baseUrl>`).
 */
export { runConformance, restBase } from './run'
export type { CheckResult, ConformanceOptions, ConformanceReport, Outcome } from './run'
export { checks } from './checks/index'
export type { Check } from './checks/index'
export { CheckFailure, NotApplicable, referenceScript } from './context'
export type { AgentScript, CheckContext } from './context'
export type { Caller, ConformanceTarget } from './client'
export { platformProfiles } from './flavors'
export type { PlatformName, PlatformProfile } from './flavors'
export { countOutcomes, formatJson, formatTable } from './report'
export { main } from './cli'
