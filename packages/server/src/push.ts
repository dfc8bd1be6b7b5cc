import type { PushMessage } from '@preview-chat/core/contract'

export type { ServerPushListener } from './bus/types'

/** Hears a user's execution updates (what every flavor sends). */
export type PushListener = (message: PushMessage) => void
