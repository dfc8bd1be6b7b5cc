import { releasedPart } from './engine/slices/released'
import { completeReleasedSnapshot } from './wire/contract/released'

/**
 * What `releasedPlatform()` gives a client: the engine's part for the released n8n 2.41 and the
 * completion of its snapshots. Opaque: not a value to make by hand.
 */
export interface ReleasedPlatform {
  readonly enginePart: object
  readonly completeSnapshot: object
}

/**
 * The released n8n 2.41, spoken as well as the spec's servers (`released: releasedPlatform()`):
 * a turn it begins without `execution-started` is shown live under a stand-in id until the server
 * names it, the statuses and active execution its snapshots leave out are derived (a turn with no
 * output yet holds the gate for `SILENT_TURN_MAX_AGE_MS` at most), and Stop closes the turn's
 * stream where it has no Stop route. `createPreviewChatClient` has it by default; a
 * `createMinimalPreviewChatClient` for the spec's servers only goes without it (about 0.9 KB gz).
 */
export function releasedPlatform(): ReleasedPlatform {
  return { enginePart: releasedPart, completeSnapshot: completeReleasedSnapshot }
}
