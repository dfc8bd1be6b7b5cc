/**
 * The relay part's share of the trace's shapes (`../shapes.ts` composes every part's): its action
 * and its key of the engine state, typed against its model.
 */
import { nullable, number, object, optional, record, string } from '../../wire/contract/schema'
import type { EngineState } from '../model'
import type { RelayAction } from '../relay'
import { anything, type EveryField, type PartShapes } from '../shapeKit'
import type { RelayingState, RelayState } from './relay'

const relayFields: EveryField<RelayState> = {
  following: nullable(
    object({
      tab: string,
      executionId: string,
      seq: number,
      since: number,
      checked: nullable(number),
    }),
  ),
  syncAsked: nullable(string),
  holds: record(number),
}

/** The relay's action (another tab's message, parsed by the part) and its key (`relay`). */
export const relayShapes: PartShapes<RelayAction, Omit<RelayingState, keyof EngineState>> = {
  actions: { 'relay-received': { data: anything, at: number, stampedAt: number } },
  state: { relay: optional(object(relayFields)) },
}
