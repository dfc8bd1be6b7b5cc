// `pnpm demo`: the reference server (port 4317) and the example chat app (Vite, port 5173, with
// `/rest` and the push WebSocket proxied to the server), then the URL to open. Ctrl-C stops both.
// Every workspace package runs from its TypeScript sources, so there is nothing to build first.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const serverDir = `${root}packages/server`
const appDir = `${root}examples/chat-app`

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`)
  return index >= 0 && args[index + 1] ? Number(args[index + 1]) : fallback
}
const serverPort = option('server-port', 4317)
// `--flavor n8n-2.41`: the server emulates the released n8n 2.41, and the app talks to it as to one.
const flavorIndex = args.indexOf('--flavor')
const flavor = flavorIndex >= 0 ? args[flavorIndex + 1] : undefined
const appPort = option('port', 5173)
const serverUrl = `http://127.0.0.1:${serverPort}`

// The server's own CLI, run by its tsx with the workspace's source condition.
const tsxCli = createRequire(`${serverDir}/package.json`).resolve('tsx/cli')
const server = spawn(
  process.execPath,
  [
    tsxCli,
    '--conditions=@preview-chat/source',
    'src/cli.ts',
    '--port',
    String(serverPort),
    ...(flavor ? ['--flavor', flavor] : []),
  ],
  { cwd: serverDir, stdio: ['ignore', 'pipe', 'inherit'] },
)

let vite = null
let stopping = false
async function stop(code) {
  if (stopping) return
  stopping = true
  await vite?.close().catch(() => undefined)
  if (server.exitCode === null) {
    server.kill('SIGTERM')
    await new Promise((resolve) => {
      const timer = setTimeout(() => (server.kill('SIGKILL'), resolve()), 3000)
      server.once('exit', () => (clearTimeout(timer), resolve()))
    })
  }
  process.exit(code)
}
process.on('SIGINT', () => void stop(0))
process.on('SIGTERM', () => void stop(0))
server.on('exit', (code) => {
  if (stopping) return
  console.error(`The reference server exited (code ${code}).`)
  void stop(1)
})

await new Promise((resolve) => {
  let seen = ''
  server.stdout.on('data', (chunk) => {
    process.stdout.write(`[server] ${chunk}`)
    seen += chunk
    if (seen.includes('listening on')) resolve()
  })
})

process.env.PREVIEW_CHAT_SERVER = serverUrl
const { createServer } = await import('vite')
vite = await createServer({
  root: appDir,
  configFile: `${appDir}/vite.config.ts`,
  server: { port: appPort, strictPort: true },
  logLevel: 'warn',
})
try {
  await vite.listen()
} catch (error) {
  console.error(`Could not start the app on port ${appPort}: ${error.message}`)
  await stop(1)
}

console.log(`
  preview-chat demo: the reference server is at ${serverUrl}, the app proxies /rest to it.
  Users: alice, bob (read + execute), carol (read only); pick one at the top right.
  Try: "/long 200" (about 8 s of text) then reload mid-answer, open a second tab, or press Stop;
  "/delegate 5000"; "/suspend"; a message with **markdown** (the answer quotes it).

  Open http://localhost:${appPort}${flavor ? `/?server=${flavor}` : ''}

  Press Ctrl-C to stop.
`)
