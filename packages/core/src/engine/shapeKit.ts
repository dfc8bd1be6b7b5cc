/**
 * What the trace's shapes are written with (`shapes.ts`, and each part's own table beside its
 * part): the tables' types, which make a field or an action type added to the model and not to its
 * table fail the typecheck, and the few field shapes every table uses.
 */
import {
  array,
  check,
  isRecord,
  object,
  optional,
  string,
  unknown,
  type Schema,
} from '../wire/contract/schema'

/** The keys of `T` that may not be left out (`text: string | undefined` is one: it must be listed). */
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T]

/** A schema for each field of `T` an action must carry (its `type` aside). */
export type FieldsOf<T> = { [K in Exclude<RequiredKeys<T>, 'type'>]: Schema<unknown> }

/** The fields of each action of the union `A`, by its type: an action table. */
export type ActionFields<A extends { type: string }> = {
  [T in A['type']]: FieldsOf<Extract<A, { type: T }>>
}

/** A schema for every field of `T`, required or not (the table says which may be absent). */
export type EveryField<T> = { [K in keyof T]-?: Schema<unknown> }

/**
 * What a part adds to the trace's shapes: its actions' fields by type, and its key of the engine
 * state (absent without the part, so each is `optional`).
 */
export interface PartShapes<A extends { type: string }, S> {
  actions: ActionFields<A>
  state: EveryField<S>
}

export const anObject = check(unknown, isRecord, 'expected an object')
/** An error as the engine keeps it (`ErrorRecord`). */
export const anError = object({ code: string, message: string })
/** A field that may be absent from JSON, as `undefined` is (`text` of `submit-requested`). */
export const anything = optional(unknown)
/** A list of ids or tokens. */
export const strings = array(string)
