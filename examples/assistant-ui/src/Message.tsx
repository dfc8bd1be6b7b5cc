import {
  MessagePartPrimitive,
  MessagePrimitive,
  useAuiState,
  type FileMessagePartProps,
  type ReasoningMessagePartProps,
  type ToolCallMessagePartProps,
} from '@assistant-ui/react'
import { MarkdownTextPrimitive } from '@assistant-ui/react-markdown'
import remarkGfm from 'remark-gfm'

/** Answers are markdown (raw HTML stays text); the session already paces the stream per frame. */
function MarkdownText() {
  return (
    <MarkdownTextPrimitive className="part-markdown" remarkPlugins={[remarkGfm]} smooth={false} />
  )
}

function Reasoning({ text, status }: ReasoningMessagePartProps) {
  return (
    <details className="part-reasoning" open={status.type === 'running'}>
      <summary>Thinking</summary>
      {text}
    </details>
  )
}

function File({ filename, mimeType }: FileMessagePartProps) {
  return (
    <p className="part-file">
      📎 {filename} ({mimeType})
    </p>
  )
}

/**
 * Any tool call: its name and state, its result; Approve / Decline while it waits for a person
 * (assistant-ui's `interrupt`, answered through `resume`); a delegation's child trace nested.
 */
function ToolCall(props: ToolCallMessagePartProps) {
  const { toolName, status, result, isError, interrupt, resume, messages } = props
  const state = interrupt
    ? 'waiting for you'
    : result === undefined
      ? status.type === 'running'
        ? 'running…'
        : 'no result'
      : isError
        ? 'failed'
        : 'done'
  return (
    <div className="part-tool" data-testid={`tool-${toolName}`} data-status={status.type}>
      <p>
        <strong>{toolName}</strong>: {state}
        {result !== undefined && <code> {JSON.stringify(result)}</code>}
      </p>
      {interrupt && (
        <p className="actions">
          <button type="button" onClick={() => resume({ approved: true })}>
            Approve
          </button>
          <button type="button" onClick={() => resume({ approved: false })}>
            Decline
          </button>
        </p>
      )}
      {messages && (
        <blockquote className="child" data-testid="child-trace">
          <MessagePartPrimitive.Messages>{() => <ChildMessage />}</MessagePartPrimitive.Messages>
        </blockquote>
      )}
    </div>
  )
}

const parts = { Text: MarkdownText, Reasoning, File, tools: { Fallback: ToolCall } }

function ChildMessage() {
  const truncated = useAuiState((s) => s.message.status?.type === 'incomplete')
  return (
    <MessagePrimitive.Root className="child-message">
      <MessagePrimitive.Parts components={parts} />
      {truncated && <small>(the rest is not kept)</small>}
    </MessagePrimitive.Root>
  )
}

export function UserMessage() {
  return (
    <MessagePrimitive.Root className="message user" data-testid="message-user">
      <MessagePrimitive.Parts />
    </MessagePrimitive.Root>
  )
}

const endings: Record<string, string> = {
  cancelled: 'Stopped',
  error: 'The agent failed',
  other: 'Interrupted',
}

export function AssistantMessage() {
  const status = useAuiState((s) => s.message.status)
  const reason = status?.type === 'incomplete' ? status.reason : undefined
  return (
    <MessagePrimitive.Root
      className="message assistant"
      data-testid="message-assistant"
      data-status={status?.type}
      data-reason={status && 'reason' in status ? status.reason : undefined}
    >
      <MessagePrimitive.Parts components={parts} />
      {status?.type === 'running' && <span className="typing">…</span>}
      {reason && endings[reason] && (
        <p role="note" className="ending">
          {endings[reason]}
          {status?.type === 'incomplete' &&
            status.error !== undefined &&
            `: ${String(status.error)}`}
        </p>
      )}
    </MessagePrimitive.Root>
  )
}
