import type { ChildTrace, MessagePart, Suspension, ToolCallPart } from '@preview-chat/react'
import { useEffect, useRef, useState } from 'react'
import Markdown, { type Components } from 'react-markdown'
import remarkGfm from 'remark-gfm'

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

// Links from an answer open in a new tab and tell the target nothing about this page.
const markdownComponents: Components = {
  a: ({ node: _, ...props }) => <a {...props} target="_blank" rel="noopener noreferrer" />,
}

/**
 * A text part. An assistant's is markdown (with GitHub's tables, task lists, strikethrough):
 * react-markdown builds React elements from the syntax tree, never HTML strings, and escapes raw
 * HTML in the text, and its URL filter drops `javascript:` and other unsafe links. A person's text
 * is shown as typed.
 */
export function TextPartView({ text, markdown = false }: { text: string; markdown?: boolean }) {
  if (!markdown) return <p className="part-text part-plain">{text}</p>
  return <MarkdownWhenNear text={text} />
}

/**
 * Markdown costs far more to render than text (a reload of a 2,000-message thread spent half its
 * time in it, `pnpm --filter @preview-chat/bench bench:reload:profile`): an answer far from the
 * viewport shows as plain text until it comes within a screen of it, then as markdown.
 */
function MarkdownWhenNear({ text }: { text: string }) {
  const box = useRef<HTMLDivElement>(null)
  const [near, setNear] = useState(typeof IntersectionObserver === 'undefined')
  useEffect(() => {
    const element = box.current
    if (near || !element) return
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting)) setNear(true)
      },
      { rootMargin: '100% 0px' },
    )
    observer.observe(element)
    return () => observer.disconnect()
  }, [near])
  return (
    <div ref={box} className="part-text part-markdown">
      {near ? (
        <Markdown remarkPlugins={[remarkGfm]} components={markdownComponents}>
          {text}
        </Markdown>
      ) : (
        <p className="part-plain">{text}</p>
      )}
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
