import { cookies } from 'next/headers'
import { sessionCookie, userOfSession } from '../lib/session'
import { seeOther } from '../lib/redirect'

/** `/`: a new thread for the signed-in user (its id minted here, `new=1`), else the sign-in. */
export async function GET(): Promise<Response> {
  const user = await userOfSession((await cookies()).get(sessionCookie)?.value)
  return seeOther(user === null ? '/signin' : `/t/${crypto.randomUUID()}?new=1`)
}
