import type { ChildTrace, MessagePart, Suspension, ToolCallPart } from '@preview-chat/react'
import { useEffect, useRef, useState, type ComponentType } from 'react'

export interface SuspensionActions {
  /** The open suspension of this tool call, if it waits for a person. */
  suspension?: Suspension | undefined
  /** Approve (`true`) or decline (`false`) it; absent when this user may not answer now. */
  onAnswer?: ((suspension: Suspension, approved: boolean) => void) | undefined
}

function json(value: unknown): string {
  if (value === undefined) return ''
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2)
}

type MarkdownComponent = ComponentType<{ text: string }>

/** The markdown renderer (`markdown.tsx`, a lazy chunk): once loaded, the same for every answer. */
let loadedMarkdown: MarkdownComponent | null = null
let loadingMarkdown: Promise<MarkdownComponent> | null = null

function loadMarkdown(): Promise<MarkdownComponent> {
  loadingMarkdown ??= import('./markdown').then(
    ({ MarkdownText }) => (loadedMarkdown = MarkdownText),
    (error: unknown) => {
      loadingMarkdown = null // a later answer near the viewport tries again
      throw error
    },
  )
  return loadingMarkdown
}

/**
 * A text part. An assistant's is markdown (`markdown.tsx`: react-markdown with GitHub's tables,
 * task lists, strikethrough; raw HTML stays text, unsafe links are dropped). A person's text is
 * shown as typed.
 */
export function TextPartView({ text, markdown = false }: { text: string; markdown?: boolean }) {
  if (!markdown) return <p className="part-text part-plain">{text}</p>
  return <MarkdownWhenNear text={text} />
}

/**
 * One observer for every answer (a reload of 2,000 messages would otherwise make 1,000), and
 * the answers of a render observed in one task after it: the effects of a render that a store
 * update started run inside its commit, and observing 1,000 elements there delays the transcript.
 */
let nearObserver: IntersectionObserver | null = null
const onNear = new Map<Element, () => void>()
const toObserve = new Set<Element>()

function observeQueued() {
  nearObserver ??= new IntersectionObserver(
    (entries) => {
      for (const entry of entries)
        if (entry.isIntersecting) {
          onNear.get(entry.target)?.()
          onNear.delete(entry.target)
          nearObserver?.unobserve(entry.target)
        }
    },
    { rootMargin: '100% 0px' },
  )
  for (const element of toObserve) nearObserver.observe(element)
  toObserve.clear()
}

/** Calls `then` once `element` comes within a screen of the viewport; returns the unsubscribe. */
function whenNear(element: Element, then: () => void): () => void {
  onNear.set(element, then)
  if (toObserve.size === 0) setTimeout(observeQueued, 0)
  toObserve.add(element)
  return () => {
    onNear.delete(element)
    toObserve.delete(element)
    nearObserver?.unobserve(element)
  }
}

/**
 * Markdown costs far more to render than text (a reload of a 2,000-message thread spent half its
 * time in it, `pnpm --filter @preview-chat/bench bench:reload:profile`): an answer far from the
 * viewport shows as plain text until it comes within a screen of it, then as markdown, once the
 * markdown chunk is loaded (the first answer near the viewport loads it; until then, and if it
 * fails to load, the same text stays plain, so nothing is ever hidden).
 */
function MarkdownWhenNear({ text }: { text: string }) {
  const box = useRef<HTMLDivElement>(null)
  const [near, setNear] = useState(typeof IntersectionObserver === 'undefined')
  const [Rendered, setRendered] = useState<MarkdownComponent | null>(() => loadedMarkdown)
  useEffect(() => {
    const element = box.current
    if (near || !element) return
    return whenNear(element, () => setNear(true))
  }, [near])
  useEffect(() => {
    if (!near || Rendered) return
    let current = true
    loadMarkdown().then(
      (component) => current && setRendered(() => component),
      () => {}, // stays plain text
    )
    return () => {
      current = false
    }
  }, [near, Rendered])
  return (
    <div ref={box} className="part-text part-markdown">
      {near && Rendered ? <Rendered text={text} /> : <p className="part-plain">{text}</p>}
    </div>
  )
}

/** A reasoning block, collapsed by default (a native `<details>`: keyboard and screen-reader ready). */
export function ReasoningPartView({ text, open }: { text: string; open?: boolean }) {
  return (
    <details className="part-reasoning" open={open}>
      <summary>Reasoning</summary>
      <p>{text}</p>
    </details>
  )
}

/** What a delegated child agent produced; `truncated` marks a delegation over its budget. */
export function ChildTraceView({ trace }: { trace: ChildTrace }) {
  return (
    <section className="child-trace" aria-label="Delegated agent">
      {trace.reasoningSegments.map((segment) => (
        <ReasoningPartView key={segment.id} text={segment.content} />
      ))}
      {trace.steps.length > 0 && (
        <ul className="child-steps">
          {trace.steps.map((step) => (
            <li key={step.toolCallId}>
              <code>{step.toolName}</code> {step.running ? 'running…' : 'done'}
            </li>
          ))}
        </ul>
      )}
      {trace.text && (
        <p className="child-text" data-testid="child-text">
          {trace.text}
        </p>
      )}
      {trace.truncated && (
        <p className="truncated-marker" data-testid="truncated-marker">
          Truncated: the delegated agent wrote more than the 4,000 characters that are kept.
        </p>
      )}
    </section>
  )
}

export function ToolCallPartView({
  part,
  suspension,
  onAnswer,
}: { part: ToolCallPart } & SuspensionActions) {
  const state =
    part.state === 'rejected'
      ? 'failed'
      : part.state === 'resolved'
        ? 'done'
        : suspension
          ? 'waiting for approval'
          : 'running…'
  return (
    <div className={`part-tool part-tool-${part.state ?? 'open'}`}>
      <details open={Boolean(part.childTrace) || Boolean(suspension)}>
        <summary>
          Tool <code>{part.toolName}</code> <span className="tool-state">{state}</span>
        </summary>
        {part.input !== undefined && (
          <div className="tool-io">
            <h4>Input</h4>
            <pre>{json(part.input)}</pre>
          </div>
        )}
        {part.output !== undefined && (
          <div className="tool-io">
            <h4>Output</h4>
            <pre>{json(part.output)}</pre>
          </div>
        )}
        {part.error && <p className="tool-error">Error: {part.error}</p>}
        {part.childTrace && <ChildTraceView trace={part.childTrace} />}
      </details>
      {suspension && (
        <div className="suspension" role="group" aria-label={`Approval for ${part.toolName}`}>
          <p>This tool call waits for your approval.</p>
          <button
            type="button"
            className="primary"
            disabled={!onAnswer}
            onClick={() => onAnswer?.(suspension, true)}
          >
            Approve
          </button>
          <button type="button" disabled={!onAnswer} onClick={() => onAnswer?.(suspension, false)}>
            Decline
          </button>
        </div>
      )}
    </div>
  )
}

export function PartView({
  part,
  suspensions,
  onAnswer,
  markdown = false,
}: {
  part: MessagePart
  suspensions: readonly Suspension[]
  onAnswer?: SuspensionActions['onAnswer']
  /** Text parts are markdown (an assistant's answer). */
  markdown?: boolean
}) {
  switch (part.type) {
    case 'text':
      return <TextPartView text={part.text} markdown={markdown} />
    case 'reasoning':
      return <ReasoningPartView text={part.text} />
    case 'tool-call':
      return (
        <ToolCallPartView
          part={part}
          suspension={suspensions.find((s) => s.toolCallId === part.toolCallId)}
          onAnswer={onAnswer}
        />
      )
    case 'file':
      return (
        <p className="part-file">
          File {part.fileName} ({part.mimeType}, {part.sizeBytes} bytes)
        </p>
      )
  }
}
