/**
 * `@preview-chat/server/postgres`: the record of a deployment of several instances in Postgres
 * (`pg`). Node only; the main entry stays browser-safe.
 */
export { createPostgresStore } from './store'
export type { PostgresStore, PostgresStoreOptions } from './store'
export { PostgresStoreError } from './errors'
export type { PostgresStoreErrorCode } from './errors'
export { migrate, migrationsFolder, readMigrations } from './migrate'
export type { Migration } from './migrate'
export { instanceLost, startLeaseKeeper } from '../store/lease-keeper'
export type { LeaseKeeper, LeaseKeeperOptions } from '../store/lease-keeper'
