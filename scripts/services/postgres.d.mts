/** A Postgres server the tests started (see postgres.mjs). */
export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/preview_chat` (trust authentication, loopback only). */
  readonly url: string
  readonly port: number
  /** Its temp directory: the cluster in `data/`, the unix socket beside it. */
  readonly dir: string
  /** Stops the server, keeping its data and port (a fault: Postgres down). */
  down(): Promise<void>
  /** Starts it again after `down()`, on the same data and port. */
  up(): Promise<void>
  /** `down()` then `up()`. */
  restart(): Promise<void>
  /** Stops the server and removes its directory. */
  stop(): Promise<void>
}

/** Debian's Postgres binaries' folder, installed with apt-get when missing and allowed (root). */
export function ensurePostgres(): string

/** A fresh cluster on a free loopback port, with an empty database `preview_chat`. */
export function startPostgres(): Promise<TestPostgres>
