// A port free on 127.0.0.1 for a server a script or test starts (the services, the consumer checks).
import { createServer } from 'node:net'

/**
 * A port the kernel says is free on 127.0.0.1 right now: asked for with port 0, then released.
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      if (address === null || typeof address === 'string') {
        server.close()
        reject(new Error('the kernel gave no port for 127.0.0.1:0'))
        return
      }
      server.close(() => resolve(address.port))
    })
  })
}
