/**
 * `preview-chat-conformance <baseUrl>`: runs the suite and prints its table (or `--json`); the exit
 * status is 0 only when no check failed (1 when one did, 2 for a usage error).
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import type { ConformanceTarget } from './client'
import { referenceScript, type AgentScript } from './context'
import { platformProfiles, type PlatformName } from './flavors'
import { formatJson, formatTable } from './report'
import { runConformance } from './run'

const usage = `Usage: preview-chat-conformance <baseUrl> [options]

Checks a live preview-chat server from outside, one check per rule of docs/rules.md.
<baseUrl> is the REST base (http://127.0.0.1:4317/rest); a URL without a path gets /rest.

  --user 'Name: value'            a header naming the thread's owner (repeatable)
  --other-user 'Name: value'      a header naming another user (repeatable)
  --read-only-user 'Name: value'  a header naming a user with agent:read only (repeatable, optional)
  --users-file FILE               JSON { "user": {headers}, "otherUser": {…}, "readOnlyUser": {…} }
  --project ID, --agent ID        the agent's path (default p1, a1)
  --flavor F                      the platform's declared limits: spec (default), n8n-2.41, next-era
  --script reference              the reference server's scripted agent (and its users alice, bob,
                                  carol when none are given): runs the checks that need a long,
                                  a suspending or a delegating turn
  --long-message TEXT             a message your agent answers for several seconds
  --message TEXT                  the message of ordinary turns
  --only IDS                      only these rule ids (comma-separated, repeatable)
  --timeout-ms N                  each check's deadline (default 20000)
  --json                          the report as JSON
`

type Credentials = ConformanceTarget['credentials']

/** `Name: value` lines as a header record; throws on a line without a colon. */
function headers(lines: string[] | undefined): Record<string, string> | undefined {
  if (!lines?.length) return undefined
  return Object.fromEntries(
    lines.map((line) => {
      const colon = line.indexOf(':')
      if (colon <= 0) throw new UsageError(`"${line}" is not a header (Name: value)`)
      return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()]
    }),
  )
}

class UsageError extends Error {}

/** `--users-file`: `{ "user": {headers}, "otherUser": {…}, "readOnlyUser": {…} }`, checked. */
function usersFile(path: string): Record<string, Record<string, string> | undefined> {
  let users: unknown
  try {
    users = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new UsageError(`--users-file ${path}: ${error instanceof Error ? error.message : ''}`)
  }
  const isHeaders = (value: unknown) =>
    typeof value === 'object' &&
    value !== null &&
    Object.values(value).every((header) => typeof header === 'string')
  const entries = typeof users === 'object' && users !== null ? Object.entries(users) : []
  if (entries.length === 0 || !entries.every(([, headers]) => isHeaders(headers))) {
    throw new UsageError(
      `--users-file ${path}: give { "user": { "Header": "value" }, "otherUser": { … } }`,
    )
  }
  return Object.fromEntries(entries) as Record<string, Record<string, string>>
}

function credentialsOf(values: Record<string, unknown>, script: string | undefined): Credentials {
  const file = values['users-file'] as string | undefined
  const fromFile = file ? usersFile(file) : {}
  const credentials: Credentials = {
    owner: headers(values.user as string[]) ?? fromFile.user,
    other: headers(values['other-user'] as string[]) ?? fromFile.otherUser,
    readOnly: headers(values['read-only-user'] as string[]) ?? fromFile.readOnlyUser,
  }
  if (!credentials.owner && !credentials.other && script === 'reference') {
    return {
      owner: { Authorization: 'Bearer alice' },
      other: { Authorization: 'Bearer bob' },
      readOnly: credentials.readOnly ?? { Authorization: 'Bearer carol' },
    }
  }
  if (!credentials.owner || !credentials.other) {
    throw new UsageError('give two users: --user and --other-user (or --users-file)')
  }
  return credentials
}

function scriptOf(values: Record<string, unknown>): AgentScript {
  const script = values.script as string | undefined
  if (script !== undefined && script !== 'reference') {
    throw new UsageError(`--script ${script}: the only script is "reference"`)
  }
  const long = values['long-message'] as string | undefined
  const base = script === 'reference' ? referenceScript : { name: 'none' }
  return long
    ? { ...base, name: `${base.name}, --long-message`, longMessage: long, boundedMessage: long }
    : base
}

/** Runs the CLI with `args` (without node and the script); resolves with the exit status. */
export async function main(
  args: string[],
  io: { out: (text: string) => void; err: (text: string) => void } = {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  },
): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        user: { type: 'string', multiple: true },
        'other-user': { type: 'string', multiple: true },
        'read-only-user': { type: 'string', multiple: true },
        'users-file': { type: 'string' },
        project: { type: 'string' },
        agent: { type: 'string' },
        flavor: { type: 'string' },
        script: { type: 'string' },
        'long-message': { type: 'string' },
        message: { type: 'string' },
        only: { type: 'string', multiple: true },
        'timeout-ms': { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    })
    if (values.help) {
      io.out(usage)
      return 0
    }
    const [baseUrl, ...extra] = positionals
    if (!baseUrl || extra.length > 0) throw new UsageError('give one <baseUrl>')
    if (!URL.canParse(baseUrl)) throw new UsageError(`"${baseUrl}" is not a URL`)
    const flavor = values.flavor ?? 'spec'
    if (!(flavor in platformProfiles)) {
      throw new UsageError(`--flavor ${flavor}: one of ${Object.keys(platformProfiles).join(', ')}`)
    }
    const timeoutMs = values['timeout-ms'] === undefined ? undefined : Number(values['timeout-ms'])
    if (timeoutMs !== undefined && !(timeoutMs > 0))
      throw new UsageError('--timeout-ms: a number of milliseconds')
    const report = await runConformance({
      baseUrl,
      credentials: credentialsOf(values, values.script),
      flavor: flavor as PlatformName,
      script: scriptOf(values),
      ...(values.project && { projectId: values.project }),
      ...(values.agent && { agentId: values.agent }),
      ...(values.message && { shortMessage: values.message }),
      ...(values.only && {
        only: values.only.flatMap((ids) => ids.split(',').map((id) => id.trim())),
      }),
      ...(timeoutMs && { timeoutMs }),
      ...(!values.json && {
        onResult: (result) =>
          io.err(`${result.outcome.padEnd(14)} ${result.rule}  ${result.check}\n`),
      }),
    })
    io.out(`${values.json ? formatJson(report) : formatTable(report)}\n`)
    return report.ok ? 0 : 1
  } catch (error) {
    if (!(error instanceof UsageError) && !(error instanceof TypeError)) throw error
    io.err(`${error.message}\n\n${usage}`)
    return 2
  }
}
