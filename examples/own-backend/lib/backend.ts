import { createPreviewChatBackend, type PreviewChatBackend } from '@preview-chat/server'
import { agent } from './agent'
import { accounts, authenticate } from './session'

/**
 * One backend for the whole server process: it holds the running turns and the record (in
 * memory here; a store of your own for several processes). Kept on `globalThis` so that `next
 * dev`'s reloads of this module do not start a second one beside the first.
 */
const shared = globalThis as typeof globalThis & { previewChatBackend?: PreviewChatBackend }

// INTERIM until the kit's `authenticate` option lands (branch kit-core): the backend knows this
// app's accounts as its users, and each request that `authenticate` accepts is passed on as that
// user. With the option, this is `createPreviewChatBackend({ agent, authenticate, basePath })`.
const backend = (shared.previewChatBackend ??= createPreviewChatBackend({
  agent,
  basePath: '/rest',
  users: Object.fromEntries(
    accounts.map((id) => [id, { id, scopes: ['agent:read', 'agent:execute'] as const }]),
  ),
}))

export async function handle(request: Request): Promise<Response> {
  const user = await authenticate(request)
  if (user === null) {
    return Response.json(
      { code: 'unauthorized', message: 'Sign in first.' },
      { status: 401, headers: { 'Cache-Control': 'no-store' } },
    )
  }
  const headers = new Headers(request.headers)
  headers.set('authorization', `Bearer ${user.userId}`)
  return backend.fetch(new Request(request, { headers }))
}
