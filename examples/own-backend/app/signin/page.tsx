import { accounts } from '../../lib/session'

/** A plain form: it posts an account name to /session, which sets the session cookie. */
export default function SignInPage() {
  return (
    <main className="signin">
      <h1>Sign in</h1>
      <form method="post" action="/session">
        <label htmlFor="name">Account</label>
        <select id="name" name="name" defaultValue={accounts[0]}>
          {accounts.map((name) => (
            <option key={name}>{name}</option>
          ))}
        </select>
        <button type="submit">Sign in</button>
      </form>
    </main>
  )
}
