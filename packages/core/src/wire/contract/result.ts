import { PreviewChatError, type PreviewChatErrorCode } from './errors'
import { isRecord, run, type Schema } from './schema'
import { explain } from './explain'

export { isRecord }

/** The outcome of turning untrusted input into a contract type. Never throws. */
export type ParseResult<T> =
  { success: true; value: T } | { success: false; error: PreviewChatError }

/** Validates `input` against `schema`; a failure becomes a `PreviewChatError` naming the paths. */
export function validate<T>(
  schema: Schema<T>,
  input: unknown,
  what: string,
  code: PreviewChatErrorCode = 'invalid_response',
): ParseResult<T> {
  const result = run(schema, input)
  return result.issues
    ? { success: false, error: contractError(result.issues, what, code) }
    : { success: true, value: result.value }
}

/** The error of input that does not match the contract, naming the first paths. */
export function contractError(
  issues: string[],
  what: string,
  code: PreviewChatErrorCode = 'invalid_response',
): PreviewChatError {
  return new PreviewChatError(
    code,
    `${what} does not match the preview-chat wire contract (${issues.slice(0, 3).join('; ')}).${explain('not-the-contract')}`,
    { issues },
  )
}

/** `JSON.parse` that reports a typed error instead of throwing. */
export function parseJson(text: string, what: string): ParseResult<unknown> {
  try {
    return { success: true, value: JSON.parse(text) as unknown }
  } catch (cause) {
    return {
      success: false,
      error: new PreviewChatError(
        'invalid_response',
        `${what} is not valid JSON.${explain('not-json')}`,
        { cause },
      ),
    }
  }
}

/**
 * Successful REST answers may come wrapped as `{ data: payload }` or bare (wire contract, "JSON
 * envelope"); none of our bare payloads has a `data` key, so its presence marks the envelope.
 */
export function unwrapEnvelope(body: unknown): unknown {
  return isRecord(body) && 'data' in body ? body.data : body
}
