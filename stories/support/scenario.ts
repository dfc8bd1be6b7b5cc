import type { PreviewChatMock, TurnGate } from '@preview-chat/msw'
import type { RequestHandler } from 'msw'
import { mountBackend } from './backend'
import type { Loader } from './storybookTypes'

/** What a story opens, and the handles its play function drives the backend with. */
export interface Scenario {
  /** The story's own reference backend and its scenario controls. */
  mock: PreviewChatMock
  threadId: string
  /** The thread was minted in this page and never sent: nothing to read. */
  isNew: boolean
  /** Whose browser this is (the mock's user when the story opens). */
  user: string
  /** Show the story-only "Reload page" button, which remounts the chat with a fresh client. */
  reloadable: boolean
  /** A turn held open by the scenario: step it, or release it. */
  turn?: TurnGate
  /** Lets go of a request the scenario holds (e.g. a Stop). */
  release?: () => void
}

export type ScenarioSetup = Partial<Omit<Scenario, 'mock'>> & { threadId: string }

/**
 * A loader that gives the story a fresh backend (with `handlers` in front of it), puts it in the
 * story's state with the kit's seeders and controls, and hands the result to the render and play
 * functions as `loaded.scenario`.
 */
export function scenario(
  setup: (mock: PreviewChatMock) => Promise<ScenarioSetup> | ScenarioSetup,
  handlers: RequestHandler[] = [],
): Loader {
  return async () => {
    const mock = await mountBackend(handlers)
    const state = await setup(mock)
    const result: Scenario = {
      mock,
      isNew: false,
      user: mock.user ?? 'alice',
      reloadable: false,
      ...state,
    }
    return { scenario: result }
  }
}

/** The scenario of a story's context (`loaded.scenario`), typed. */
export function scenarioOf(context: { loaded: Record<string, unknown> }): Scenario {
  const loaded = context.loaded.scenario as Scenario | undefined
  if (!loaded) throw new Error('This story has no `scenario(…)` loader.')
  return loaded
}
