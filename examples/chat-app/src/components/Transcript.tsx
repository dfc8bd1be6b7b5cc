import type { Message, Suspension } from '@preview-chat/react'
import {
  startTransition,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type RefObject,
} from 'react'
import { MessageView } from './Message'
import { loadMarkdown, markdownIfLoaded, type SuspensionActions } from './parts'

export interface TranscriptProps {
  messages: readonly Message[]
  /** The thread's record is known; before that an empty list means "loading", not "empty". */
  loaded?: boolean
  openSuspensions?: readonly Suspension[]
  /** A turn is streaming or followed: the log is busy. */
  busy?: boolean
  onAnswer?: SuspensionActions['onAnswer']
}

const observes = typeof IntersectionObserver !== 'undefined'

/**
 * A long thread arriving at once (a reload of 2,000 messages) renders its newest messages first,
 * what the view shows, and the rest in a transition right after: React renders those in slices
 * that yield to the browser, so no task of the render is long (issue 30: none over 50 ms).
 *
 * The rest go into a wrapper of their own (`display: contents`, so the layout is the same), made
 * with them: React builds it off the page and puts it in at once. Put one by one before the newest
 * messages instead, each placement looks for its next sibling on the page past every other new
 * one (React's `getHostSibling`), quadratic in the count: ~20 ms of one commit at 2,000 messages.
 * Returns the older messages (`null` until the transition) and the newest; the split stays where
 * the transition put it, so a new message joins the newest at the end.
 */
const TAIL = 60

function useTailFirst(messages: readonly Message[]): {
  older: readonly Message[] | null
  newest: readonly Message[]
} {
  const [split, setSplit] = useState<number | null>(null)
  const long = messages.length > TAIL
  useEffect(() => {
    if (long && split === null) startTransition(() => setSplit(messages.length - TAIL))
  }, [long, split, messages.length])
  return useMemo(() => {
    if (split === null) return { older: null, newest: long ? messages.slice(-TAIL) : messages }
    const at = Math.min(split, messages.length)
    return { older: messages.slice(0, at), newest: messages.slice(at) }
  }, [messages, long, split])
}

/**
 * The answers that came within a screen of the transcript's view (once near, always near), by
 * one IntersectionObserver for all of them. The elements a commit hands to `watch` are observed
 * in one task after it: a store update's commit runs its effects and refs in the same task, and
 * observing 1,000 answers there would delay the transcript of a reload.
 */
function useNearAnswers(root: RefObject<HTMLElement | null>) {
  const [near, setNear] = useState<ReadonlySet<string>>(() => new Set())
  const watcher = useMemo(() => {
    let observer: IntersectionObserver | null = null
    const ids = new Map<Element, string>()
    const queued = new Set<Element>()
    const observeQueued = () => {
      observer ??= new IntersectionObserver(
        (entries) => {
          const seen: string[] = []
          for (const entry of entries) {
            const id = ids.get(entry.target)
            if (!entry.isIntersecting || id === undefined) continue
            seen.push(id)
            ids.delete(entry.target)
            observer?.unobserve(entry.target)
          }
          if (seen.length > 0) setNear((before) => new Set([...before, ...seen]))
        },
        { root: root.current, rootMargin: '100% 0px' },
      )
      for (const element of queued) observer.observe(element)
      queued.clear()
    }
    return {
      watch(element: HTMLElement, id: string) {
        ids.set(element, id)
        if (queued.size === 0) setTimeout(observeQueued, 0)
        queued.add(element)
        return () => {
          ids.delete(element)
          queued.delete(element)
          observer?.unobserve(element)
        }
      },
      disconnect: () => observer?.disconnect(),
    }
  }, [root])
  useEffect(() => watcher.disconnect, [watcher])
  return { near, watch: observes ? watcher.watch : undefined }
}

/** The conversation. `role="log"` with `aria-live` reads streamed text out as it arrives. */
export function Transcript({
  messages,
  loaded = true,
  openSuspensions = [],
  busy,
  onAnswer,
}: TranscriptProps) {
  const log = useRef<HTMLElement>(null)
  const pinned = useRef(true)
  // Growing text moves the bottom away without moving `scrollTop`: only the reader scrolling up
  // unpins, and reaching the bottom again pins.
  const lastScrollTop = useRef(0)
  const { near, watch } = useNearAnswers(log)
  // Answers render as plain text until they are near the view and the markdown chunk is loaded.
  const [markdown, setMarkdown] = useState(markdownIfLoaded)
  const { older, newest } = useTailFirst(messages)
  // A failed chunk load (a deploy replaced the chunks, the network dropped) is tried again the
  // next time the set of answers near the view changes.
  const wantsMarkdown = !observes || near.size > 0
  useEffect(() => {
    if (!wantsMarkdown || markdown) return
    let current = true
    loadMarkdown().then(
      (render) => current && setMarkdown(() => render),
      () => {}, // the answers stay plain text until the next try
    )
    return () => {
      current = false
    }
  }, [wantsMarkdown, markdown, near])

  // Keep the newest text in view while it streams, unless the reader scrolled up. Whether to pin
  // is decided at the commit, before a scroll event can see the grown list; the scroll itself is
  // made in the next animation frame, before it is painted: it needs the list laid out, and done
  // here it would lay out the whole list once more inside the commit.
  useLayoutEffect(() => {
    const element = log.current
    if (!pinned.current || !element) return
    const frame = requestAnimationFrame(() => {
      // The reader may have scrolled up since the commit (scroll events come before frames).
      if (pinned.current) element.scrollTop = element.scrollHeight
    })
    return () => cancelAnimationFrame(frame)
  }, [older, newest, near, markdown])
  const view = (message: Message) => (
    <MessageView
      key={message.id}
      message={message}
      suspensions={openSuspensions}
      onAnswer={onAnswer}
      markdown={markdown && (!observes || near.has(message.id)) ? markdown : undefined}
      watch={watch}
    />
  )
  return (
    <section
      ref={log}
      onScroll={(event) => {
        const el = event.currentTarget
        if (el.scrollHeight - el.scrollTop - el.clientHeight < 48) pinned.current = true
        else if (el.scrollTop < lastScrollTop.current) pinned.current = false
        lastScrollTop.current = el.scrollTop
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
        <>
          {older && older.length > 0 && <div className="transcript-older">{older.map(view)}</div>}
          {newest.map(view)}
        </>
      )}
    </section>
  )
}
