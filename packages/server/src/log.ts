/** One structured log entry of the backend: JSON-able, with the ids it concerns where known. */
export interface PreviewChatLogEntry {
  level: 'info' | 'warn' | 'error'
  /** What happened: `turn_started`, `turn_ended`, `agent_crashed`, `snapshot_write_failed`, … */
  event: string
  mainId: string
  executionId?: string
  threadId?: string
  userId?: string
  /** The turn's status, for `turn_ended`. */
  status?: string
  /** What failed, in full (a stack included): for the log only, never for an answer. */
  error?: { name: string; message: string; stack?: string }
}

/** Receives the backend's log entries (nothing by default; the CLI writes them to the console). */
export type PreviewChatLogger = (entry: PreviewChatLogEntry) => void

/** An error as a log entry carries it. */
export function loggedError(error: unknown): NonNullable<PreviewChatLogEntry['error']> {
  if (error instanceof Error) {
    return { name: error.name, message: error.message, ...(error.stack && { stack: error.stack }) }
  }
  return { name: 'Error', message: String(error) }
}

/** Writes each entry as one JSON line on the console (the CLI's logger). */
export const consoleLogger: PreviewChatLogger = (entry) => {
  const line = JSON.stringify({ time: new Date().toISOString(), ...entry })
  if (entry.level === 'error') console.error(line)
  else console.log(line)
}
