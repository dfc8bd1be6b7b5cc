// Serves the built docs site (site/doc_build) as a static host does: a path is its file, else the
// same path with `.html`, else its folder's `index.html`; anything else is the site's 404 page,
// with status 404, so that a broken link shows as one.
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize } from 'node:path'

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
}

export interface DocsServer {
  url: string
  close(): Promise<void>
}

/**
 * A file the build named by its content (`static/js/index.c8275e2f70.js`): a static host lets the
 * browser keep it, as the docs' host does, so that a tab opening page after page (docs.spec's crawl
 * of every page) fetches and compiles the site's scripts once, not once a page. Every page, the
 * service worker and anything else is fetched each time (`no-store`).
 */
const isHashed = (path: string) => /^\/static\/.*\.[0-9a-f]{8,}\.[a-z]+$/.test(path)

export async function startDocsServer(root: string): Promise<DocsServer> {
  const isFile = async (path: string) => (await stat(path).catch(() => null))?.isFile() ?? false
  const server = createServer((req, res) => {
    void (async () => {
      const path = normalize(decodeURIComponent((req.url ?? '/').split(/[?#]/)[0] ?? '/'))
      const base = join(root, path)
      let file: string | undefined
      for (const candidate of [base, `${base}.html`, join(base, 'index.html')]) {
        if (candidate.startsWith(root) && (await isFile(candidate))) {
          file = candidate
          break
        }
      }
      res.writeHead(file ? 200 : 404, {
        'Content-Type': types[extname(file ?? '.html')] ?? 'application/octet-stream',
        'Cache-Control':
          file && isHashed(path) ? 'public, max-age=31536000, immutable' : 'no-store',
      })
      createReadStream(file ?? join(root, '404.html')).pipe(res)
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
