import { JSDOM } from 'jsdom'

let dom: JSDOM | null = null

/**
 * A jsdom window as the global DOM for React. `pretendToBeVisual` gives it a real
 * requestAnimationFrame that fires at 60 Hz (jsdom runs it on a 1000/60 ms interval), which is
 * what the throttled hook schedules on.
 */
export function installDom(): void {
  if (dom) return
  dom = new JSDOM('<!doctype html><html><body><div id="root"></div></body></html>', {
    pretendToBeVisual: true,
    url: 'http://localhost/',
  })
  const window = dom.window
  const globals = globalThis as Record<string, unknown>
  Object.assign(globals, {
    window,
    document: window.document,
    HTMLElement: window.HTMLElement,
    Node: window.Node,
    requestAnimationFrame: window.requestAnimationFrame.bind(window),
    cancelAnimationFrame: window.cancelAnimationFrame.bind(window),
    IS_REACT_ACT_ENVIRONMENT: false,
  })
  if (!('navigator' in globalThis)) globals.navigator = window.navigator
}

export function uninstallDom(): void {
  dom?.window.close()
  dom = null
  for (const name of [
    'window',
    'document',
    'HTMLElement',
    'Node',
    'requestAnimationFrame',
    'cancelAnimationFrame',
  ])
    Reflect.deleteProperty(globalThis, name)
}

/** Resolves after `ms` of real time. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Counts animation frames while it runs. */
export function frameCounter() {
  const frames: number[] = []
  let running = true
  const tick = () => {
    if (!running) return
    frames.push(performance.now())
    requestAnimationFrame(tick)
  }
  requestAnimationFrame(tick)
  return {
    /** Frames that fired between `from` and `to`. */
    between: (from: number, to: number) => frames.filter((at) => at >= from && at <= to).length,
    stop: () => void (running = false),
  }
}
