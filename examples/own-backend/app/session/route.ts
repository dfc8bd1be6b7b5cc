import { seeOther } from '../../lib/redirect'
import { sessionCookie, sessionFor, userOfSession } from '../../lib/session'

/** Sign-in: the form of /signin posts an account name; the answer sets the session cookie. */
export async function POST(request: Request): Promise<Response> {
  const form = await request.formData()
  const session = await sessionFor(String(form.get('name') ?? ''))
  if ((await userOfSession(session)) === null) return seeOther('/signin')
  return seeOther('/', {
    'Set-Cookie': `${sessionCookie}=${session}; Path=/; HttpOnly; SameSite=Lax`,
  })
}
