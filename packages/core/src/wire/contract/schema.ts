/**
 * The few schema combinators the wire contract needs (they replaced valibot: a fraction of its
 * bundle, and faster on history reads). A schema checks untrusted JSON and returns what it accepts,
 * unknown fields dropped, or `FAIL`. Given an `issues` list it also records why, as
 * `path: message` lines (`messages.0.role: …`); the parsers run it without one first, and again
 * with one only to explain a failure.
 */

export const FAIL: unique symbol = Symbol('invalid')
export type Fail = typeof FAIL

export interface Schema<T> {
  (input: unknown, issues?: string[], path?: string): T | Fail
  /** Set on `optional(…)`: an object may leave the field out. */
  optional?: true
}

export type Infer<S> = S extends Schema<infer T> ? T : never

type Entries = Record<string, Schema<unknown>>
type Simplify<T> = { [K in keyof T]: T[K] } & {}
/** An object schema's output: the fields of `optional(…)` schemas may be absent. */
export type ObjectOf<E extends Entries> = Simplify<
  { [K in keyof E as E[K] extends { optional: true } ? never : K]: Infer<E[K]> } & {
    [K in keyof E as E[K] extends { optional: true } ? K : never]?: Infer<E[K]>
  }
>

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `key` is a string and an own key of `record` (not one it inherits, like `toString`). */
export const hasOwn = <T extends object>(record: T, key: unknown): key is keyof T =>
  typeof key === 'string' && Object.hasOwn(record, key)

const kind = (input: unknown) =>
  input === null ? 'null' : Array.isArray(input) ? 'array' : typeof input

function fail(issues: string[] | undefined, path: string | undefined, message: string): Fail {
  issues?.push(`${path || '(root)'}: ${message}`)
  return FAIL
}

/** The failure of an input of the wrong kind: `expected a string, got number`. */
function mismatch(
  issues: string[] | undefined,
  path: string | undefined,
  name: string,
  input: unknown,
): Fail {
  return fail(issues, path, `expected ${name}, got ${kind(input)}`)
}

const at = (path: string | undefined, key: string | number) =>
  path ? `${path}.${key}` : String(key)

function primitive<T>(name: string, accepts: (input: unknown) => boolean): Schema<T> {
  return (input, issues, path) =>
    accepts(input) ? (input as T) : mismatch(issues, path, name, input)
}

const isNumber = (input: unknown) => typeof input === 'number' && !Number.isNaN(input)

export const string = primitive<string>('a string', (input) => typeof input === 'string')
export const number = primitive<number>('a number', isNumber)
export const boolean = primitive<boolean>('a boolean', (input) => typeof input === 'boolean')
export const numberOrString = primitive<number | string>(
  'a number or a string',
  (input) => isNumber(input) || typeof input === 'string',
)
/** An epoch in ms or an ISO-8601 string. */
export const timestamp = numberOrString
export const unknown: Schema<unknown> = (input) => input

export function literal<const T extends string | number | boolean>(value: T): Schema<T> {
  return primitive(JSON.stringify(value), (input) => input === value)
}

export function picklist<const T extends string>(values: readonly T[]): Schema<T> {
  return primitive(`one of ${values.join(', ')}`, (input) => values.includes(input as T))
}

/** `schema`, refined by `test` (the `message` says what it wants). */
export function check<T>(schema: Schema<T>, test: (value: T) => boolean, message: string) {
  return ((input, issues, path) => {
    const value = schema(input, issues, path)
    return value === FAIL || test(value) ? value : fail(issues, path, message)
  }) as Schema<T>
}

export function nullable<T>(schema: Schema<T>): Schema<T | null> {
  return (input, issues, path) => (input === null ? null : schema(input, issues, path))
}

/** A field an object may leave out (absent, or `undefined`). */
export function optional<T>(schema: Schema<T>): Schema<T | undefined> & { optional: true } {
  const field = ((input, issues, path) =>
    input === undefined ? undefined : schema(input, issues, path)) as Schema<T | undefined> & {
    optional: true
  }
  field.optional = true
  return field
}

/**
 * An array of `item`. `keep` drops the items it refuses before they are checked (forward
 * compatibility: a part type this client does not know yet is dropped, not fatal). An array of
 * items each given back as it is, none dropped, is given back itself: no copy.
 */
export function array<T>(item: Schema<T>, keep?: (input: unknown) => boolean): Schema<T[]> {
  return (input, issues, path) => {
    if (!Array.isArray(input)) return mismatch(issues, path, 'an array', input)
    // A copy, from the first item that is not given back as it is.
    let out: T[] | null = null
    let failed = false
    for (let i = 0; i < input.length; i++) {
      const value: unknown = input[i]
      if (keep && !keep(value)) {
        out ??= input.slice(0, i)
        continue
      }
      const checked = item(value, issues, issues && at(path, i))
      if (checked === FAIL) {
        if (!issues) return FAIL
        failed = true
      } else if (out) out.push(checked)
      else if (checked !== value) (out = input.slice(0, i)).push(checked)
    }
    return failed ? FAIL : (out ?? (input as T[]))
  }
}

/** An object used as a map: every own key's value is a `value`. */
export function record<T>(value: Schema<T>): Schema<Record<string, T>> {
  return (input, issues, path) => {
    if (!isRecord(input)) return mismatch(issues, path, 'an object', input)
    const out: Record<string, T> = {}
    let failed = false
    for (const key of Object.keys(input)) {
      const checked = value(input[key], issues, issues && at(path, key))
      if (checked === FAIL) {
        if (!issues) return FAIL
        failed = true
      } else Object.defineProperty(out, key, { value: checked, enumerable: true, writable: true })
    }
    return failed ? FAIL : out
  }
}

/**
 * An object with these fields, and no others (unknown fields are dropped). A plain object that
 * has only these fields, each given back as it is, is given back itself: what `JSON.parse` made is
 * checked where it lies, not copied (issue 36).
 */
export function object<const E extends Entries>(entries: E): Schema<ObjectOf<E>> {
  const keys = Object.keys(entries)
  // The first `n` fields of `input` that are there, as they are.
  const copy = (input: Record<string, unknown>, n: number) => {
    const out: Record<string, unknown> = {}
    for (const key of keys.slice(0, n)) if (input[key] !== undefined) out[key] = input[key]
    return out
  }
  return (input, issues, path) => {
    if (!isRecord(input)) return mismatch(issues, path, 'an object', input)
    let out: Record<string, unknown> | null =
      Object.getPrototypeOf(input) === Object.prototype ? null : {}
    let fields = 0
    let failed = false
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k] as string
      const schema = entries[key] as Schema<unknown>
      const value = input[key]
      const where = issues && at(path, key)
      // An absent field is `missing`; an optional one reads as `undefined` (absent or not).
      const checked =
        value === undefined && !schema.optional && !Object.hasOwn(input, key)
          ? fail(issues, where, 'missing')
          : schema(value, issues, where)
      if (checked === FAIL) {
        if (!issues) return FAIL
        failed = true
      } else if (checked !== undefined) {
        fields++
        if (!out && checked !== value) out = copy(input, k)
        if (out) out[key] = checked
      }
    }
    if (failed) return FAIL
    // Nothing but these fields (nor one holding `undefined`, which a copy leaves out).
    if (!out)
      for (const _key in input)
        if (--fields < 0) {
          out = copy(input, keys.length)
          break
        }
    return (out ?? input) as ObjectOf<E>
  }
}

/** Object schemas by `type`: each is `{ type, ...fields }`, for `variant`. */
export function typed<const F extends Record<string, Entries>>(
  fieldsByType: F,
): { [K in keyof F & string]: Schema<ObjectOf<{ type: Schema<K> } & F[K]>> } {
  const schemas: Record<string, Schema<unknown>> = {}
  for (const type of Object.keys(fieldsByType))
    schemas[type] = object({ type: literal(type), ...fieldsByType[type] })
  return schemas as never
}

/** One of several object schemas, chosen by the value of `key` (`type` unless told). */
export function variant<const O extends Record<string, Schema<unknown>>>(
  options: O,
  key = 'type',
): Schema<Infer<O[keyof O]>> {
  const types = `one of ${Object.keys(options).join(', ')}`
  return (input, issues, path) => {
    if (!isRecord(input)) return mismatch(issues, path, 'an object', input)
    const type = input[key]
    return hasOwn(options, type)
      ? (options[type] as Schema<Infer<O[keyof O]>>)(input, issues, path)
      : mismatch(issues, at(path, key), types, type)
  }
}

/** Runs `schema`; on failure, runs it again to collect every issue (the fast path builds no path). */
export function run<T>(
  schema: Schema<T>,
  input: unknown,
  prefix?: string,
): { value: T; issues?: undefined } | { value?: undefined; issues: string[] } {
  const value = schema(input)
  if (value !== FAIL) return { value }
  const issues: string[] = []
  schema(input, issues, prefix)
  return { issues }
}
