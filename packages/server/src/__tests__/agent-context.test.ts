import type { Message } from '@preview-chat/core/contract'
import { afterEach, describe, expect, it } from 'vitest'
import type { AgentContext } from '../agent'
import { chat, closeHosts, del, readHistory, startHost, stopPath, turn, waitFor } from './harness'

afterEach(closeHosts)

describe('the agent is given the thread so far and a signal that fires on Stop [R-SERVER-AGENT-CONTEXT]', () => {
  it('gives the second turn the first turn recorded, and aborts the signal when a Stop lands', async () => {
    const seen: { history: readonly Message[]; signal: AbortSignal }[] = []
    const server = await startHost({
      agent: async (input, context: AgentContext) => {
        seen.push({ history: context.history, signal: context.signal })
        context.emit({ type: 'text-start', id: 't' })
        context.emit({
          type: 'text-delta',
          id: 't',
          delta: `echo ${input.kind === 'message' ? input.message : ''}`,
        })
        context.emit({ type: 'text-end', id: 't' })
        if (input.kind === 'message' && input.message === 'wait') {
          await new Promise((resolve) => context.signal.addEventListener('abort', resolve))
        }
        return { kind: 'done' }
      },
    })
    const first = await turn(chat(server, { message: 'hello' }))
    const started = await first.until('execution-started')
    await first.rest()
    expect(seen[0]?.history).toEqual([])

    const second = await turn(chat(server, { message: 'wait', sessionId: started.sessionId }))
    const running = await second.until('execution-started')
    const history = seen[1]?.history ?? []
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant'])
    expect(history[0]?.content).toEqual([{ type: 'text', text: 'hello' }])
    expect(history[1]?.content).toEqual([
      expect.objectContaining({ type: 'text', text: 'echo hello' }),
    ])
    expect(seen[1]?.signal.aborted).toBe(false)

    const stop = await del(server, stopPath(started.sessionId, running.executionId))
    expect(stop.status).toBe(200)
    await waitFor(() => seen[1]?.signal.aborted, 'the agent signal to fire')
    await second.rest()
    const record = await readHistory(server, started.sessionId)
    expect(record.messages.at(-1)?.executionStatus).toBe('cancelled')
  })
})
