import type { PreviewChatUser } from '../users'
import { n8n241Flavor } from './n8n-2.41'
import { nextEraFlavor } from './next-era'
import { specFlavor } from './spec'
import type { Flavor, FlavorName, PushBackend } from './types'

export type { Flavor, FlavorName, PushBackend, PushSocketAdmission, TurnRules } from './types'

export interface FlavorOptions {
  flavor?: FlavorName | undefined
  pushBackend?: PushBackend | undefined
  users: Readonly<Record<string, PreviewChatUser>>
  /** The REST base, without a trailing slash. */
  basePath: string
}

export const flavorNames: readonly FlavorName[] = ['spec', 'n8n-2.41', 'next-era']
export const pushBackends: readonly PushBackend[] = ['sse', 'websocket']

/** The flavor the options name; throws a TypeError that says what is expected. */
export function createFlavor({
  flavor = 'spec',
  pushBackend,
  users,
  basePath,
}: FlavorOptions): Flavor {
  if (!flavorNames.includes(flavor)) {
    throw new TypeError(`flavor must be one of ${flavorNames.join(', ')}, not "${flavor}".`)
  }
  if (pushBackend !== undefined && !pushBackends.includes(pushBackend)) {
    throw new TypeError(
      `pushBackend must be one of ${pushBackends.join(', ')}, not "${pushBackend}".`,
    )
  }
  if (flavor === 'spec' || flavor === 'next-era') {
    if (pushBackend !== undefined) {
      throw new TypeError(
        `pushBackend applies to the n8n-2.41 flavor only: the ${flavor} flavor serves both (the request chooses).`,
      )
    }
    const spec = specFlavor(users, basePath)
    return flavor === 'spec' ? spec : nextEraFlavor(spec)
  }
  return n8n241Flavor(users, pushBackend ?? 'sse')
}
