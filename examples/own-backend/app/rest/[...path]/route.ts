import { backend } from '../../../lib/backend'

/**
 * The whole chat backend under `/rest`: sending, resuming, reading, Stop, and the SSE push
 * stream, all on this app's origin, so the page needs no proxy and no CORS.
 */
const handle = (request: Request) => backend.fetch(request)

export const GET = handle
export const POST = handle
export const DELETE = handle
