import {
  MessagePartPrimitive,
  MessagePrimitive,
  useAuiState,
  type ToolCallMessagePartProps,
} from '@assistant-ui/react'
import { useState } from 'react'
import { usePreviewChatExtras } from './extras'

/**
 * Where a tool call stands, in words: `waiting for you` (a suspension), `running…`, `done`,
 * `failed`, `answered` (a suspension answered: the turn went on as a new execution, whose message
 * holds the result), or `ended` (its turn ended without a result: stopped, failed, interrupted).
 */
export function toolCallLabel(
  props: Pick<ToolCallMessagePartProps, 'interrupt' | 'result' | 'isError' | 'status'>,
  executionStatus: unknown,
): string {
  if (props.interrupt) return 'waiting for you'
  if (props.result !== undefined) return props.isError ? 'failed' : 'done'
  if (props.status.type === 'running') return 'running…'
  return executionStatus === 'success' ? 'answered' : 'ended'
}

/**
 * A tool UI for any tool call (`MessagePrimitive.Parts components={{ tools: { Fallback:
 * PreviewChatToolCall } }}`): its name, where it stands (`toolCallLabel`), its result; Approve
 * and Decline while it waits for a person, which answer `{ approved: true }` / `{ approved:
 * false }` (the reference agent's `request_approval`) and say on the spot when the answer could
 * not be sent; a delegation's child trace nested.
 */
export function PreviewChatToolCall(props: ToolCallMessagePartProps) {
  const { toolCallId, toolName, result, interrupt, messages } = props
  const executionStatus = useAuiState(
    (s) => (s.message.metadata.custom as { executionStatus?: unknown }).executionStatus,
  )
  return (
    <div
      data-testid={`tool-${toolName}`}
      data-status={props.status.type}
      data-tool-call={toolCallId}
    >
      <p>
        <strong>{toolName}</strong>: {toolCallLabel(props, executionStatus)}
        {result !== undefined && <code> {JSON.stringify(result)}</code>}
      </p>
      {interrupt && <Approval toolCallId={toolCallId} />}
      {messages && (
        <blockquote data-testid="child-trace">
          <MessagePartPrimitive.Messages>{() => <ChildMessage />}</MessagePartPrimitive.Messages>
        </blockquote>
      )}
    </div>
  )
}

/** Approve / Decline of one suspension: one answer at a time, its refusal shown. */
function Approval({ toolCallId }: { toolCallId: string }) {
  const { answer } = usePreviewChatExtras()
  const [sending, setSending] = useState(false)
  const [problem, setProblem] = useState<string | null>(null)
  const respond = (approved: boolean) => {
    setSending(true)
    setProblem(null)
    answer(toolCallId, { approved }).then(
      () => setSending(false),
      (error: unknown) => {
        setSending(false)
        setProblem(error instanceof Error ? error.message : String(error))
      },
    )
  }
  return (
    <>
      <p>
        <button type="button" disabled={sending} onClick={() => respond(true)}>
          Approve
        </button>
        <button type="button" disabled={sending} onClick={() => respond(false)}>
          Decline
        </button>
      </p>
      {problem && <p role="alert">{problem}</p>}
    </>
  )
}

const childParts = { tools: { Fallback: PreviewChatToolCall } }

function ChildMessage() {
  return (
    <MessagePrimitive.Root>
      <MessagePrimitive.Parts components={childParts} />
    </MessagePrimitive.Root>
  )
}
