import * as v from 'valibot'
import { PreviewChatError, type PreviewChatErrorCode } from '@preview-chat/core'

/** The outcome of turning untrusted input into a contract type. Never throws. */
export type ParseResult<T> =
  { success: true; value: T } | { success: false; error: PreviewChatError }

/** Validates `input` against `schema`; a failure becomes a `PreviewChatError` naming the paths. */
export function validate<T>(
  schema: v.GenericSchema<unknown, T>,
  input: unknown,
  what: string,
  code: PreviewChatErrorCode = 'invalid_response',
): ParseResult<T> {
  const result = v.safeParse(schema, input)
  if (result.success) return { success: true, value: result.output }
  const issues = result.issues.map(
    (issue) => `${v.getDotPath(issue) ?? '(root)'}: ${issue.message}`,
  )
  return {
    success: false,
    error: new PreviewChatError(
      code,
      `${what} does not match the preview-chat wire contract (${issues.slice(0, 3).join('; ')}). ` +
        'Check that the server speaks the agents v2 preview chat API and that the client and server versions match.',
      { issues },
    ),
  }
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
        `${what} is not valid JSON. Check that the URL points at the preview chat API and not at an HTML page or a proxy.`,
        { cause },
      ),
    }
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Successful REST answers may come wrapped as `{ data: payload }` or bare (wire contract, "JSON
 * envelope"); none of our bare payloads has a `data` key, so its presence marks the envelope.
 */
export function unwrapEnvelope(body: unknown): unknown {
  return isRecord(body) && 'data' in body ? body.data : body
}
