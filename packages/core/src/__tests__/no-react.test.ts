import { expect, it, vi } from 'vitest'

// The engine is framework-agnostic (STYLE.md, habit 1): with React mocked to throw on import,
// the whole public entry still loads.
vi.mock('react', () => {
  throw new Error('@preview-chat/core must not import react')
})

it('loads without react [R-CORE-NO-REACT]', async () => {
  const core = await import('../index')
  expect(core.PreviewChatError).toBeTypeOf('function')
})
