import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { aiSdkAgent } from '@preview-chat/server/ai-sdk'
import { streamText } from 'ai'

/**
 * The model: any OpenAI-compatible Chat Completions endpoint. `OPENAI_BASE_URL` points it at the
 * repository's mock (scripts/n8n/mock-openai.mjs) in the e2e and `pnpm dev`; read per request, so
 * `next start` takes it from its environment.
 */
function model() {
  const provider = createOpenAICompatible({
    name: 'openai-compatible',
    baseURL: process.env.OPENAI_BASE_URL ?? 'http://127.0.0.1:18080/v1',
    apiKey: process.env.OPENAI_API_KEY ?? 'not-needed-by-the-mock',
  })
  return provider.chatModel(process.env.OPENAI_MODEL ?? 'gpt-4o-mini')
}

/**
 * The agent: the thread so far and the new message go to the model; a Stop from any tab aborts
 * `abortSignal`, which ends the provider's HTTP request.
 */
export const agent = aiSdkAgent(({ messages, abortSignal }) =>
  streamText({
    model: model(),
    system: 'You are a helpful assistant.',
    messages,
    abortSignal,
  }),
)
