/**
 * A redirect to a path of this origin. Relative: the request's URL as Next rebuilds it can name
 * another host than the one the browser used (`localhost` for `127.0.0.1`), whose cookies differ.
 */
export const seeOther = (path: string, headers: Record<string, string> = {}) =>
  new Response(null, { status: 303, headers: { ...headers, Location: path } })
