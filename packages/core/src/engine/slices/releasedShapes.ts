/**
 * The released platform part's share of the trace's shapes (`../shapes.ts` composes every
 * part's): its key of the engine state, typed against its model. It takes no action of its own.
 */
import { boolean, nullable, number, object, optional, string } from '../../wire/contract/schema'
import type { EngineState } from '../model'
import type { EveryField, PartShapes } from '../shapeKit'
import type { ReleasedState, ReleasingState } from './released'

const releasedFields: EveryField<ReleasedState> = {
  silent: nullable(object({ executionId: string, since: number, expired: boolean })),
}

/** The released platform's key of the engine state (`released`). */
export const releasedShapes: PartShapes<never, Omit<ReleasingState, keyof EngineState>> = {
  actions: {},
  state: { released: optional(object(releasedFields)) },
}
