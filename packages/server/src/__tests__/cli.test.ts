import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { errorBodyOf, send, upgradeHeaders } from './harness'

// The CLI as a user runs it: its own process, so "the process exits" is something a test can see.
const cli = fileURLToPath(new URL('../cli.ts', import.meta.url))
const packageRoot = fileURLToPath(new URL('../..', import.meta.url))
const children: ChildProcess[] = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill()
})

interface Cli {
  child: ChildProcess
  port: number
  /** Resolves with the exit code once the process ends. */
  exited: Promise<number | null>
  output: () => string
}

function runCli(args: string[]): Cli & { listening: Promise<number> } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=@preview-chat/source', cli, ...args],
    { cwd: packageRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  children.push(child)
  let output = ''
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const listening = new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8')
      const port = output.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/)?.[1]
      if (port) resolve(Number(port))
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    void exited.then((code) => reject(new Error(`the CLI exited (${code}): ${output}`)))
  })
  listening.catch(() => undefined) // a run that is meant to exit never listens
  return { child, port: 0, exited, listening, output: () => output }
}

async function startCli(args: string[]): Promise<Cli> {
  const started = runCli(['--port', '0', ...args])
  return { ...started, port: await started.listening }
}

describe('the CLI [R-SERVER-CLI]', () => {
  it('stays up after a WebSocket upgrade whose cookie is a malformed percent-escape (a) [R-SERVER-NEVER-CRASHES]', async () => {
    const server = await startCli([])
    const refused = await send(server, {
      path: '/rest/push',
      headers: { ...upgradeHeaders, Cookie: 'preview-chat-user=%' },
    })
    expect(refused.status).toBe(401)
    const after = await send(server, { path: '/rest/none' })
    expect(after.status).toBe(404)
    expect(server.child.exitCode).toBeNull()
  })

  it('--cors answers the preflight and puts the origin on every answer [R-SERVER-CORS]', async () => {
    const origin = 'http://127.0.0.1:5173'
    const server = await startCli(['--cors', origin])
    const path = '/rest/projects/p/agents/v2/a/chat'
    const preflight = await send(server, {
      method: 'OPTIONS',
      path,
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type',
      },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers['access-control-allow-origin']).toBe(origin)
    expect(preflight.headers['access-control-allow-methods']).toContain('POST')
    expect(preflight.headers['access-control-allow-headers']).toMatch(/authorization/i)
    expect(preflight.headers['access-control-allow-credentials']).toBe('true')
    const refused = await send(server, { method: 'POST', path, headers: { Origin: origin } })
    expect(refused.status).toBe(401)
    expect(refused.headers['access-control-allow-origin']).toBe(origin)
    errorBodyOf(refused)
  })

  it('--flavor n8n-2.41 serves the emulation of the released n8n 2.41', async () => {
    const server = await startCli(['--flavor', 'n8n-2.41', '--delta-ms', '0'])
    expect(server.output()).toContain('(emulating n8n 2.41, push over sse)')
    const auth = { Cookie: 'n8n-auth=alice', 'browser-id': 'cli-test' }
    const turn = await send(server, {
      method: 'POST',
      path: '/rest/projects/p/agents/v2/a/chat',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: '/words 2', sessionId: 'cli' }),
    })
    expect(turn.body).toMatch(/^:ok\n\ndata: \{"type":"start-step"\}/)
    expect(turn.body).toMatch(/"type":"done","sessionId":"cli","executionId":"[A-Za-z0-9]{16}"/)
    const bearer = await send(server, {
      path: '/rest/projects/p/agents/v2/a/chat/cli/messages',
      headers: { Authorization: 'Bearer alice' },
    })
    expect(JSON.parse(bearer.body)).toEqual({ status: 'error', message: 'Unauthorized' })
    const push = await send(server, { path: '/rest/push', headers: auth })
    expect(push.status).toBe(500)
  })

  it('--flavor next-era serves the platform’s queue protocol [R-QUEUE-ACCEPT]', async () => {
    const server = await startCli(['--flavor', 'next-era', '--delta-ms', '0'])
    expect(server.output()).toContain("(the platform's unreleased queue protocol)")
    const turn = await send(server, {
      method: 'POST',
      path: '/rest/projects/p/agents/v2/a/chat',
      headers: { Authorization: 'Bearer alice', 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: '/words 2', sessionId: 'cli', newSession: true }),
    })
    expect(turn.headers['preview-chat-capabilities']).toBe('message-dedupe, message-queue')
    expect(turn.body).toMatch(
      /^:ok\n\ndata: \{"type":"message-queued","queueId":"1","sessionId":"cli"\}/,
    )
    const queue = await send(server, {
      path: '/rest/projects/p/agents/v2/a/chat/cli/queue',
      headers: { Authorization: 'Bearer alice' },
    })
    expect(JSON.parse(queue.body)).toEqual({ data: { steerableExecutionId: null, items: [] } })
  })

  it('--push-backend websocket serves the n8n push channel as a WebSocket only', async () => {
    const server = await startCli(['--flavor', 'n8n-2.41', '--push-backend', 'websocket'])
    const upgraded = await send(server, {
      path: '/rest/push?pushRef=cli',
      headers: { ...upgradeHeaders, Cookie: 'n8n-auth=alice' },
    })
    expect(upgraded.status).toBe(101)
    const plain = await send(server, {
      path: '/rest/push?pushRef=cli',
      headers: { Cookie: 'n8n-auth=alice' },
    })
    expect([plain.status, plain.body]).toEqual([401, 'Unauthorized'])
  })

  it('refuses an unknown --flavor, and --push-backend without --flavor n8n-2.41', async () => {
    const unknown = runCli(['--port', '0', '--flavor', 'n8n-1.0'])
    expect(await unknown.exited).toBe(2)
    expect(unknown.output()).toMatch(/--flavor must be one of spec, n8n-2.41/)
    const alone = runCli(['--port', '0', '--push-backend', 'websocket'])
    expect(await alone.exited).toBe(2)
    expect(alone.output()).toMatch(/--push-backend goes with --flavor n8n-2.41/)
  })

  it('refuses a --store or --bus that is not Postgres or Redis, and --mains with either [R-DEPLOY-CLI]', async () => {
    const store = runCli(['--port', '0', '--store', 'mysql://db/chat'])
    expect(await store.exited).toBe(2)
    expect(store.output()).toMatch(/--store must be a postgres:\/\/ URL/)
    const bus = runCli(['--port', '0', '--bus', 'http://cache:6379'])
    expect(await bus.exited).toBe(2)
    expect(bus.output()).toMatch(/--bus must be a redis:\/\/ or rediss:\/\/ URL/)
    const simulated = runCli(['--port', '0', '--mains', '2', '--bus', 'redis://127.0.0.1:1'])
    expect(await simulated.exited).toBe(2)
    expect(simulated.output()).toMatch(/--mains simulates several mains in one process/)
  })

  it('refuses a --cors value that is not an origin [R-SERVER-CORS]', async () => {
    const run = runCli(['--port', '0', '--cors', 'http://example.com/path'])
    expect(await run.exited).toBe(2)
    expect(run.output()).toMatch(/--cors/)
  })

  it('--allowed-host lets push pages of that name in, and refuses a bad name (issue 19, l) [R-SERVER-PUSH-ORIGIN]', async () => {
    const server = await startCli([
      '--allowed-host',
      'chat.example',
      '--allowed-host',
      '.corp.example',
    ])
    const dial = (host: string) =>
      send(server, {
        path: '/rest/push',
        headers: {
          ...upgradeHeaders,
          Cookie: 'preview-chat-user=alice',
          Host: host,
          Origin: `http://${host}`,
        },
      })
    expect((await dial('chat.example')).status).toBe(101)
    expect((await dial('a.corp.example')).status).toBe(101)
    const refused = await dial('evil.example')
    expect([refused.status, errorBodyOf(refused).code]).toEqual([403, 'origin_not_allowed'])
    const bad = runCli(['--port', '0', '--allowed-host', 'http://chat.example'])
    expect(await bad.exited).toBe(2)
    expect(bad.output()).toMatch(/--allowed-host takes host names/)
  })
})
