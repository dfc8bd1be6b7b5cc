// What the specs that start their own servers share: a free port, a process that is up once a URL
// answers, and the console problems of a page.
import type { ConsoleMessage, Page } from '@playwright/test'
import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { createServer, type AddressInfo } from 'node:net'

export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * `node <args>`; resolves once `ready` answers (any status). Rejects with the process's output
 * when it exits first, or after 20 s (then it is killed).
 */
export async function startNodeProcess(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; ready: string },
): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk))
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk))
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`node ${args.join(' ')} exited:\n${output}`)
    const answered = await fetch(options.ready, { redirect: 'manual' }).then(
      () => true,
      () => false,
    )
    if (answered) return child
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  child.kill()
  throw new Error(`node ${args.join(' ')} did not answer at ${options.ready}:\n${output}`)
}

/** This runner's environment without its NODE_OPTIONS (the workspace's source condition). */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _, ...env } = process.env
  return { ...env, ...extra }
}

/**
 * `next start` of the app built in `appDir` (Next runs its own build, not this runner's source
 * condition); resolves once `readyPath` answers.
 */
export function startNext(
  appDir: string,
  port: number,
  options: { env?: Record<string, string>; readyPath?: string } = {},
): Promise<ChildProcess> {
  const nextBin = createRequire(`${appDir}package.json`).resolve('next/dist/bin/next')
  return startNodeProcess([nextBin, 'start', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: appDir,
    env: childEnv({ NEXT_TELEMETRY_DISABLED: '1', ...options.env }),
    ready: `http://127.0.0.1:${port}${options.readyPath ?? '/'}`,
  })
}

/** Console errors and warnings and uncaught errors of a page, from now on. */
export function collectProblems(page: Page): string[] {
  const problems: string[] = []
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'error' || message.type() === 'warning')
      problems.push(`${message.type()}: ${message.text()} (${message.location().url})`)
  })
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`))
  return problems
}
