import { connection, NextResponse, type NextRequest } from 'next/server'
import { userOf } from './users'

/**
 * `/`: a new thread for the user. Its id is minted here and marked `new=1` (nothing to read yet),
 * and its first message creates it on the server. A route handler, not a page: under
 * `cacheComponents` (on in what `create-next-app` makes) a page is prerendered into a shell that
 * is sent first, so a page's `redirect()` came as a 200 and a client-side redirect; here it is a
 * 307. `connection()` first: it waits for a request, so the id is not one minted at build (`next
 * build` refuses `crypto.randomUUID()` before it).
 */
export async function GET(request: NextRequest): Promise<NextResponse> {
  await connection()
  const user = userOf(request.nextUrl.searchParams.get('user') ?? undefined)
  return NextResponse.redirect(new URL(`/t/${crypto.randomUUID()}?user=${user}&new=1`, request.url))
}
