// Node 20 has no global WebSocket; msw's interceptor only patches one that exists. Imported for
// its effect by the tests that mount the WebSocket push link.
if (typeof globalThis.WebSocket === 'undefined') {
  Object.defineProperty(globalThis, 'WebSocket', {
    value: function PlaceholderWebSocket() {},
    configurable: true,
    writable: true,
  })
}
