/** The development users of the reference server (see packages/server/README.md). */
export const users = ['alice', 'bob', 'carol'] as const

export type User = (typeof users)[number]

/** `?user=` of the page, if it names one of them; else alice. */
export function userOf(value: string | string[] | undefined): User {
  return users.find((user) => user === value) ?? 'alice'
}
