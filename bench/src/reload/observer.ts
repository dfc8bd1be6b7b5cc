/**
 * What the reload row installs in every document of a measured page (`addInitScript`), before
 * any of the page's own scripts: a MutationObserver that records `performance.now()` (ms since
 * the navigation started) when the marker of the last recorded message first appears in the DOM,
 * when the live answer's text grows past what that first render showed, and whether the empty
 * thread's text was ever in the DOM at an animation frame (so painted); and a PerformanceObserver
 * of long tasks. Plain JavaScript in a string: the page gets it as is, untranspiled.
 */
export interface ObserverConfig {
  /** The marker word of the last recorded message. */
  marker: string
  /** The first words of the empty thread's text (`No messages yet.` in the demo). */
  emptyText: string
  /** Elements that are messages: counted, and the last one must hold the marker or follow it. */
  itemSelector: string
  /** The live answer (last match), for a thread with a running turn; null otherwise. */
  growSelector: string | null
}

export interface Observed {
  /** The marker in the DOM. */
  marker: number | null
  /** Once the next frame after it was rendered (a task posted from its animation frame). */
  markerFrame: number | null
  /** The live answer's text length at the marker, and when it first grew past it. */
  baseLength: number | null
  grew: number | null
  grewLength: number | null
  /** When the empty text was added to the DOM; whether it was still there at a frame. */
  empty: number[]
  emptyPainted: boolean
  longTasks: [start: number, duration: number][]
  /** How many message elements, and how many of them hold the marker, at the marker. */
  items: number
}

export function observerScript(config: ObserverConfig): string {
  return `(() => {
  const config = ${JSON.stringify(config)};
  const b = { marker: null, markerFrame: null, baseLength: null, grew: null, grewLength: null,
    empty: [], emptyPainted: false, longTasks: [], items: 0 };
  window.__bench = b;
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) b.longTasks.push([e.startTime, e.duration]);
    }).observe({ type: 'longtask', buffered: true });
  } catch {}
  const textOf = (node) => (node.nodeType === 1 || node.nodeType === 3 ? node.textContent || '' : '');
  const liveLength = () => {
    const all = document.querySelectorAll(config.growSelector);
    const last = all[all.length - 1];
    return last ? last.textContent.length : 0;
  };
  let reported = false;
  const report = () => {
    if (reported) return;
    if (b.marker === null || b.markerFrame === null) return;
    if (config.growSelector && b.grew === null) return;
    reported = true;
    window.__benchDone?.();
  };
  new MutationObserver((records) => {
    const now = performance.now();
    for (const r of records) {
      const nodes = r.type === 'characterData' ? [r.target] : r.addedNodes;
      for (const node of nodes) {
        const text = textOf(node);
        if (b.marker === null && text.includes(config.marker)) {
          b.marker = now;
          // In a trace too (\`--cpu\`): where the main thread's CPU time is counted to.
          performance.mark('bench:marker');
          b.items = document.querySelectorAll(config.itemSelector).length;
          // After the next frame's rendering (style, layout, paint): a task posted from its
          // animation frame callback runs once that frame is done.
          requestAnimationFrame(() => {
            const channel = new MessageChannel();
            channel.port1.onmessage = () => { b.markerFrame = performance.now(); report(); };
            channel.port2.postMessage(0);
          });
        }
        if (text.includes(config.emptyText)) {
          b.empty.push(now);
          requestAnimationFrame(() => {
            if (node.isConnected && textOf(node).includes(config.emptyText)) b.emptyPainted = true;
          });
        }
      }
    }
    if (config.growSelector && b.marker !== null) {
      const length = liveLength();
      if (b.baseLength === null) b.baseLength = length;
      else if (b.grew === null && length > b.baseLength) {
        b.grew = now;
        b.grewLength = length;
        report();
      }
    }
  }).observe(document, { childList: true, subtree: true, characterData: true });
})();`
}
