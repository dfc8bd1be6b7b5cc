/**
 * Which host names are this server's own, for the push WebSocket's Origin check. A page of
 * another site whose name was made to resolve to this server (DNS rebinding) sends a `Host` and an
 * `Origin` of that name, which agree: so, as Vite's `server.allowedHosts`, a name must also be
 * this server's: a loopback name or address, the address it is bound to, or one configured.
 */

/** A loopback name or address, as a URL writes its hostname: these cannot be rebound. */
export function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    // "*.localhost" resolves to loopback too (RFC 6761), as browsers do without asking DNS.
    hostname.endsWith('.localhost') ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname) ||
    hostname === '[::1]'
  )
}

/**
 * `name` (a host name or an address, no port) as a URL writes its hostname: lowercase, IPv4
 * normalized, IPv6 in brackets; undefined when it is no host name. An IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.2`, as a dual-stack socket reports one) is its IPv4 address.
 */
export function hostnameOf(name: string): string | undefined {
  const bare = name.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '')
  const written = bare.includes(':') && !bare.startsWith('[') ? `[${bare}]` : bare
  let url: URL
  try {
    url = new URL(`http://${written}`)
  } catch {
    return undefined
  }
  const onlyHost = url.host === url.hostname && `http://${url.host}/` === url.href
  return onlyHost && url.hostname !== '' ? url.hostname : undefined
}

/**
 * Checks an `allowedHosts` option: host names or addresses (`chat.example`, `192.0.2.2`), or a
 * name with a leading dot for it and its subdomains (`.example`); returns them as `hostnameOf`
 * writes them, or throws a TypeError that says what is expected.
 */
export function checkAllowedHosts(names: readonly string[]): string[] {
  return names.map((name) => {
    const dot = name.startsWith('.') ? '.' : ''
    const hostname = hostnameOf(name.slice(dot.length))
    if (hostname === undefined) {
      throw new TypeError(
        `allowedHosts takes host names such as "chat.example" or ".example" (no scheme, port or path), not "${name}".`,
      )
    }
    return dot + hostname
  })
}

/** Whether `hostname` is loopback or one of `own` (written as `checkAllowedHosts` returns them). */
export function isOwnHost(hostname: string, own: readonly string[]): boolean {
  if (isLoopbackHost(hostname)) return true
  return own.some((entry) =>
    entry.startsWith('.')
      ? hostname === entry.slice(1) || hostname.endsWith(entry)
      : hostname === entry,
  )
}
