/**
 * The reference server in a child process with `--expose-gc` (`load-server.ts`), as the server
 * benches drive it: so that each heap figure is the server's alone. One implementation for
 * `load.ts` and `unread-turns.ts`.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { ServerMeasure } from './load-server'

export interface ServerProcess {
  /** The server's URL, once it listens. */
  ready(): Promise<string>
  /** The server's heap and counters now (`forget`: after dropping what it recorded). */
  measure(type?: 'measure' | 'forget'): Promise<ServerMeasure>
  /** Stops the server and waits for its process to end. */
  close(): Promise<void>
}

/** Starts `load-server.ts` with `env` (its `LOAD_*` settings). */
export function startServerProcess(env: Record<string, string>): ServerProcess {
  const child = fork(fileURLToPath(new URL('./load-server.ts', import.meta.url)), {
    execArgv: ['--expose-gc', '--import', 'tsx', '--conditions=@preview-chat/source'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  return {
    ready: async () => (await nextMessage<{ url: string }>(child, 'ready')).url,
    measure(type = 'measure') {
      const answer = nextMessage<ServerMeasure>(child, 'measure')
      child.send({ type })
      return answer
    },
    async close() {
      child.send({ type: 'close' })
      await new Promise((resolve) => child.once('exit', resolve))
    },
  }
}

/** The next message of `type` from the child, or a rejection if it exits first. */
function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (answer: { type: string }) => {
      if (answer.type !== type) return
      child.off('message', onMessage)
      child.off('exit', onExit)
      resolve(answer as T)
    }
    const onExit = (code: number | null) => reject(new Error(`the server process exited (${code})`))
    child.on('message', onMessage)
    child.once('exit', onExit)
  })
}
