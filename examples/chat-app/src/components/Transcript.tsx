import type { Message, Suspension } from '@preview-chat/react'
import { useLayoutEffect, useRef } from 'react'
import { MessageView } from './Message'
import type { SuspensionActions } from './parts'

export interface TranscriptProps {
  messages: readonly Message[]
  /** The thread's record is known; before that an empty list means "loading", not "empty". */
  loaded?: boolean
  openSuspensions?: readonly Suspension[]
  /** A turn is streaming or followed: the log is busy. */
  busy?: boolean
  onAnswer?: SuspensionActions['onAnswer']
}

/** The conversation. `role="log"` with `aria-live` reads streamed text out as it arrives. */
export function Transcript({
  messages,
  loaded = true,
  openSuspensions = [],
  busy,
  onAnswer,
}: TranscriptProps) {
  // Keep the newest text in view while it streams, unless the reader scrolled up.
  const log = useRef<HTMLElement>(null)
  const pinned = useRef(true)
  useLayoutEffect(() => {
    if (pinned.current && log.current) log.current.scrollTop = log.current.scrollHeight
  }, [messages])
  return (
    <section
      ref={log}
      onScroll={(event) => {
        const el = event.currentTarget
        pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48
      }}
      className="transcript"
      role="log"
      aria-live="polite"
      aria-busy={busy ?? false}
      aria-label="Conversation"
      data-testid="transcript"
    >
      {messages.length === 0 && !loaded ? (
        <p className="empty" data-testid="loading">
          Loading the conversation…
        </p>
      ) : messages.length === 0 ? (
        <p className="empty">
          No messages yet. Say something below. Try <code>/long 200</code> (about eight seconds of
          text) and reload the page mid-answer; answers render markdown.
        </p>
      ) : (
        messages.map((message) => (
          <MessageView
            key={message.id}
            message={message}
            suspensions={openSuspensions}
            onAnswer={onAnswer}
          />
        ))
      )}
    </section>
  )
}
