/**
 * The repository's own markdown (docs/rules.md, docs/decisions/*.md, docs/interop.md), included
 * into the site's pages from where it lives, links to other files of the repository by relative
 * path. This remark plugin points those links at the site's page for that file where there is one,
 * and turns the others (a script, a JSON file, a README) into the file's path in code, which the
 * reader finds in the repository: the site has no page there to link to. A link to this machine
 * (`localhost`, `127.0.0.1`) becomes code too.
 */
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The parts of an mdast tree this plugin reads (remark's nodes, as far as links go). */
interface Node {
  type: string
  url?: string
  value?: string
  children?: Node[]
}

const repo = fileURLToPath(new URL('..', import.meta.url))

/** The site's page of a repository file, by its path from the repository's root. */
export function pageOf(path: string): string | undefined {
  if (path === 'docs/rules.md') return '/rules'
  if (path === 'docs/interop.md') return '/guide/n8n'
  if (path === 'docs/decisions' || path === 'docs/decisions/') return '/decisions/'
  const decision = /^docs\/decisions\/([\w-]+)\.md$/.exec(path)
  if (decision) return `/decisions/${decision[1]}`
  return undefined
}

/** A node's text, as the reader sees it. */
function textOf(node: Node): string {
  return node.value ?? (node.children ?? []).map(textOf).join('')
}

function rewrite(children: Node[], file: string): void {
  for (const [index, node] of children.entries()) {
    if (node.type === 'link' && node.url !== undefined) {
      const link = node
      // A machine's own address in a record (GFM autolinks `http://127.0.0.1:5678/rest`): the
      // reader's browser has nothing there, so it is shown as code, not as a link.
      if (/^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])[:/]/.test(node.url)) {
        children[index] = { type: 'inlineCode', value: textOf(node) }
        continue
      }
      if (/^[a-z]+:|^#/.test(node.url)) continue
      const [path = '', hash] = node.url.split('#')
      const target = relative(repo, join(dirname(file), path)).replace(/\\/g, '/')
      const page = pageOf(target)
      if (page) link.url = hash ? `${page}#${hash}` : page
      else children[index] = { type: 'inlineCode', value: target }
      continue
    }
    if (node.children) rewrite(node.children, file)
  }
}

export function repoLinks() {
  return (tree: { children: Node[] }, file: { path?: string }) => {
    if (!file.path) return
    const from = relative(repo, file.path)
    // Only the repository's markdown outside the site; the site's pages link by route.
    if (from.startsWith('site/') || from.startsWith('..')) return
    rewrite(tree.children, file.path)
  }
}
