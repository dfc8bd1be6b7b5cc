import { http, type RequestHandler } from 'msw'

/** Requests held in front of the backend until released; while open they go straight through. */
export interface RequestHold {
  /** The MSW handler to put in front of the backend's (it answers nothing itself). */
  handler: RequestHandler
  /** Holds the matching requests from now on. */
  hold(): void
  /** Lets the held requests go on to the backend, and stops holding. */
  release(): void
  /** How many requests wait now. */
  readonly pending: number
}

/**
 * Holds `method` requests to paths matching `path` (an MSW path pattern). A resolver that returns
 * nothing hands the request to the next handler, here the reference backend's.
 */
export function holdRequests(
  method: 'get' | 'delete',
  path: string,
  { held = false }: { held?: boolean } = {},
): RequestHold {
  let gate: Promise<void> | null = null
  let open: () => void = () => {}
  let pending = 0
  const hold = () => {
    gate ??= new Promise<void>((resolve) => (open = resolve))
  }
  if (held) hold()
  return {
    handler: http[method](path, async () => {
      if (!gate) return
      pending++
      await gate
      pending--
    }),
    hold,
    release() {
      gate = null
      open()
    },
    get pending() {
      return pending
    },
  }
}
