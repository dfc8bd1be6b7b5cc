import type { Message } from '@preview-chat/core'

const at = '2026-11-30T10:00:00.000Z'

/**
 * A recorded transcript of `count` messages at `version`: only the last message's text differs
 * between versions. `rich`: every fourth message also carries a tool call with input and output
 * (what history reads validate besides text). Execution ids are `${prefix}-${n}`.
 */
export function transcript(
  count: number,
  version: number,
  rich = false,
  prefix = 'exec',
): Message[] {
  return Array.from({ length: count }, (_, i): Message => {
    const executionId = `${prefix}-${i >> 1}`
    const role = i % 2 ? ('assistant' as const) : ('user' as const)
    const text = i === count - 1 ? `answer, version ${version}` : `message ${i} `.repeat(8)
    return {
      id: `${executionId}:${role}`,
      role,
      executionId,
      executionStatus: 'success',
      createdAt: at,
      content:
        rich && role === 'assistant' && i % 4 === 3
          ? [
              {
                type: 'tool-call',
                toolName: 'search',
                toolCallId: `call-${i}`,
                input: { query: `query ${i}`, limit: 5 },
                state: 'resolved',
                output: { results: [{ title: `result ${i}`, url: `https://example.com/${i}` }] },
                startTime: 1,
                endTime: 2,
              },
              { type: 'text', text },
            ]
          : [{ type: 'text', text }],
    }
  })
}

/** The JSON body of a history read of that transcript. */
export function historyBody(messages: Message[]): string {
  return JSON.stringify({ data: { messages, openSuspensions: [], activeExecutionId: null } })
}
