import {
  toolCallStatus,
  type ChildTrace,
  type Message,
  type MessagePart,
  type Suspension,
  type ToolCallPart,
  type ToolCallStatus,
} from '@preview-chat/react'
import type { ComponentType } from 'react'

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

/** Renders an answer's text as markdown (`markdown.tsx`, a lazy chunk). */
export type MarkdownComponent = ComponentType<{ text: string }>

let loadedMarkdown: MarkdownComponent | null = null
let loadingMarkdown: Promise<MarkdownComponent> | null = null

/** The markdown renderer if its chunk is loaded already (the same for every answer). */
export function markdownIfLoaded(): MarkdownComponent | null {
  return loadedMarkdown
}

/** Loads the markdown chunk once; a failed load is tried again by the next call. */
export function loadMarkdown(): Promise<MarkdownComponent> {
  loadingMarkdown ??= import('./markdown').then(
    ({ MarkdownText }) => (loadedMarkdown = MarkdownText),
    (error: unknown) => {
      loadingMarkdown = null
      throw error
    },
  )
  return loadingMarkdown
}

/**
 * A text part. An assistant's is markdown (`markdown.tsx`: react-markdown with GitHub's tables,
 * task lists, strikethrough; raw HTML stays text, unsafe links are dropped) once `render` is
 * given, which the transcript does for an answer near the viewport once the markdown chunk is
 * loaded: markdown costs far more to render than text, and a reload of a long thread must not
 * wait for it. Until then it is the same text, plain, as a person's text always is.
 */
export function TextPartView({
  text,
  markdown = false,
  render: Render,
}: {
  text: string
  markdown?: boolean
  render?: MarkdownComponent | undefined
}) {
  if (!markdown || !Render) return <p className="part-text part-plain">{text}</p>
  return (
    <div className="part-text part-markdown">
      <Render text={text} />
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

/** What the summary says of a call, by `toolCallStatus` (`state` alone cannot tell a call that
 * runs from an answered suspension's: both have none). */
const toolStateLabels: Record<ToolCallStatus, string> = {
  writing: 'writing…',
  running: 'running…',
  waiting: 'waiting for approval',
  resolved: 'done',
  rejected: 'failed',
  answered: 'answered',
  ended: 'no result',
}

/**
 * The open suspensions are what waits: a call whose message still carries its payload after the
 * answer (until the resumed turn's record is read) is answered, not waiting.
 */
function shownStatus(status: ToolCallStatus, suspension: Suspension | undefined): ToolCallStatus {
  if (suspension) return 'waiting'
  return status === 'waiting' ? 'answered' : status
}

/** A tool call of `message`: its status, input, output, error, delegation, and its approval. */
export function ToolCallPartView({
  part,
  message,
  suspension,
  onAnswer,
}: { part: ToolCallPart; message: Pick<Message, 'executionStatus'> } & SuspensionActions) {
  const status = shownStatus(toolCallStatus(part, message), suspension)
  const state = toolStateLabels[status]
  return (
    <div className={`part-tool part-tool-${status}`} data-tool-status={status}>
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
  message,
  suspensions,
  onAnswer,
  markdown = false,
  render,
}: {
  part: MessagePart
  /** The message `part` belongs to: its turn's ending tells where a tool call stands. */
  message: Pick<Message, 'executionStatus'>
  suspensions: readonly Suspension[]
  onAnswer?: SuspensionActions['onAnswer']
  /** Text parts are markdown (an assistant's answer). */
  markdown?: boolean
  /** The markdown renderer, once this answer is to be rendered as markdown. */
  render?: MarkdownComponent | undefined
}) {
  switch (part.type) {
    case 'text':
      return <TextPartView text={part.text} markdown={markdown} render={render} />
    case 'reasoning':
      return <ReasoningPartView text={part.text} />
    case 'tool-call':
      return (
        <ToolCallPartView
          part={part}
          message={message}
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
