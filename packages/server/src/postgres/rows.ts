import { PostgresStoreError } from './errors'

/**
 * Rows read back from Postgres are parsed, never trusted: each column through a `Column`, which
 * gives its typed value or `invalid`. A row that fails is a `malformed_row` error naming the table
 * and the column (never the value: it may be a user's data).
 */
export const invalid: unique symbol = Symbol('invalid')

export type Column<T> = (value: unknown) => T | typeof invalid

type Columns = Record<string, Column<unknown>>
export type RowOf<C extends Columns> = { [K in keyof C]: Exclude<ReturnType<C[K]>, typeof invalid> }

export const text: Column<string> = (value) => (typeof value === 'string' ? value : invalid)

export const int: Column<number> = (value) =>
  Number.isSafeInteger(value) ? (value as number) : invalid

/** A `bigint` column: node-postgres gives it as a string of digits, kept as one. */
export const bigintText: Column<string> = (value) =>
  typeof value === 'string' && /^-?\d+$/.test(value) ? value : invalid

/** A `jsonb` value, parsed by node-postgres; its shape is the caller's to check. */
export const json: Column<unknown> = (value) => (value === undefined ? invalid : value)

export function nullable<T>(column: Column<T>): Column<T | null> {
  return (value) => (value === null ? null : column(value))
}

export function oneOf<const T extends string>(values: readonly T[]): Column<T> {
  return (value) => (values.includes(value as T) ? (value as T) : invalid)
}

/** `row` as `columns` say, or a `malformed_row` error. */
export function parseRow<C extends Columns>(
  row: Record<string, unknown>,
  columns: C,
  table: string,
): RowOf<C> {
  const parsed: Record<string, unknown> = {}
  for (const [name, column] of Object.entries(columns)) {
    const value = column(row[name])
    if (value === invalid) throw malformed(table, `column ${name}`)
    parsed[name] = value
  }
  return parsed as RowOf<C>
}

/** The `malformed_row` error of a row of `table`, `what` naming the part that failed. */
export function malformed(table: string, what: string): PostgresStoreError {
  return new PostgresStoreError(
    'malformed_row',
    `A row of ${table} is malformed (${what}): it was not written by this version of @preview-chat/server. Fix or delete the row; nothing was read from it.`,
  )
}
