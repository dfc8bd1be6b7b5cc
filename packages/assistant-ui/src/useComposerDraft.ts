import type { AssistantRuntime } from '@assistant-ui/react'
import type { PreviewChat } from '@preview-chat/react'
import { useEffect, useMemo, useRef } from 'react'

/**
 * Keeps the session's per-thread draft (stored across reloads) in the kit's composer, which owns
 * the text. Two one-way rules, so that neither side can overwrite the other with a stale empty
 * text:
 *
 * - composer → session on every write that changed the composer's text (typing, a `setText`, a
 *   refused send handed back), except the clear of a send: the session clears the draft itself
 *   once the message is accepted and keeps it when it is not. The composer's own starting empty
 *   text is never written (it is not a change), so it cannot wipe a stored draft.
 * - session → composer once per thread: the first draft the session has (restored from storage,
 *   possibly after hydration) goes into the composer if nothing was written there first and it is
 *   still empty; on a thread switch, that thread's draft replaces the old thread's text.
 */
export function useComposerDraft(
  runtime: AssistantRuntime,
  chat: Pick<PreviewChat, 'draft' | 'setDraft'>,
  threadId: string,
): void {
  const composer = useMemo(() => runtime.thread.composer, [runtime])
  const { draft, setDraft } = chat

  const restoredFor = useRef<string | null>(null)
  useEffect(
    () =>
      composer.unstable_on('textChange', ({ text, origin }) => {
        if (origin === 'send') return
        // The composer has this thread's text now: nothing is to be restored into it.
        restoredFor.current = threadId
        setDraft(text)
      }),
    [composer, setDraft, threadId],
  )

  useEffect(() => {
    if (restoredFor.current === threadId) return
    const switched = restoredFor.current !== null
    if (!switched && draft === '') return // nothing stored (or not hydrated yet): wait for it
    restoredFor.current = threadId
    if (switched || composer.getState().text === '') composer.setText(draft)
  }, [composer, threadId, draft])
}
