import type { PreviewChatMock, TurnGate } from '@preview-chat/msw'
import { previewChatOf, type PreviewChatParameters } from '@preview-chat/msw/storybook'
import type { RequestHandler } from 'msw'

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
 * A story's parameters for the kit's Storybook loader (`previewChatLoader` in
 * .storybook/preview.tsx), which gives every story a fresh backend with `handlers` in front of
 * it: `setup` puts it in the story's state with the kit's seeders and controls, and the render
 * and play functions read the result as `scenarioOf(context)`.
 */
export function scenario(
  setup: (mock: PreviewChatMock) => Promise<ScenarioSetup> | ScenarioSetup,
  handlers: RequestHandler[] = [],
): { previewChat: PreviewChatParameters<Scenario> } {
  return {
    previewChat: {
      handlers,
      setup: async (mock) => ({
        mock,
        isNew: false,
        user: mock.user ?? 'alice',
        reloadable: false,
        ...(await setup(mock)),
      }),
    },
  }
}

/** The scenario of a story's context (`loaded.previewChat.setup`), typed. */
export function scenarioOf(context: { loaded: Record<string, unknown> }): Scenario {
  return previewChatOf<Scenario>(context).setup
}
