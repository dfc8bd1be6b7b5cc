// `node scripts/import-cycles.mjs [dir…]` (part of `pnpm lint`): fails when the TypeScript files
// below a directory import each other in a circle. Issue 27, row m: the reference server had two
// (`execution/*` with `context` and `threads`; `flavor/index` with its flavors), which made each
// file of a circle impossible to read, test or load without the others.
//
// Every relative import counts, `import type` and `export … from` included: a type-only circle
// still ties the files' meanings together. Package imports (`@preview-chat/core`) are another
// package's business. Test files (`__tests__/`, `*.test.ts`) are left out. Plain Node and the
// repository's `typescript`; `findImportCycles(dir)` is what the check's own test runs.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = fileURLToPath(new URL('..', import.meta.url))
/** What `pnpm lint` checks when it names no directory. */
export const defaultDirs = [
  'packages/server/src',
  'packages/core/src',
  'packages/react/src',
  'packages/assistant-ui/src',
  'packages/msw/src',
]

/** The non-test TypeScript files below `dir`. */
function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      return entry.name === '__tests__' || entry.name === 'node_modules' ? [] : sourceFiles(path)
    }
    return /\.tsx?$/.test(entry.name) && !/\.test(-d)?\.tsx?$/.test(entry.name) ? [path] : []
  })
}

/** The file a relative specifier names (`./x`, `./x.js`, `./dir` or `.` for its index), if any. */
function resolveImport(from, specifier) {
  const base = resolve(dirname(from), specifier)
  const candidates = [
    base,
    base.replace(/\.[mc]?js$/, '.ts'),
    base.replace(/\.jsx$/, '.tsx'),
    `${base}.ts`,
    `${base}.tsx`,
    join(base, 'index.ts'),
    join(base, 'index.tsx'),
  ]
  return candidates.find(
    (path) => /\.tsx?$/.test(path) && existsSync(path) && statSync(path).isFile(),
  )
}

/** file → the files of the same tree it imports. */
function importGraph(files) {
  const known = new Set(files)
  const graph = new Map()
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      // `./x`, `../x`, and `.` or `..` alone (the folder's index).
      .filter((specifier) => /^\.\.?(\/|$)/.test(specifier))
      .map((specifier) => resolveImport(file, specifier))
      .filter((target) => target !== undefined && known.has(target))
    graph.set(file, [...new Set(targets)])
  }
  return graph
}

/** The strongly connected components of more than one file, or of a file importing itself (Tarjan). */
function circles(graph) {
  let index = 0
  const indexOf = new Map()
  const lowOf = new Map()
  const stack = []
  const onStack = new Set()
  const found = []
  const visit = (file) => {
    indexOf.set(file, index)
    lowOf.set(file, index)
    index++
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file)) {
      if (!indexOf.has(target)) {
        visit(target)
        lowOf.set(file, Math.min(lowOf.get(file), lowOf.get(target)))
      } else if (onStack.has(target)) {
        lowOf.set(file, Math.min(lowOf.get(file), indexOf.get(target)))
      }
    }
    if (lowOf.get(file) !== indexOf.get(file)) return
    const component = []
    let member
    do {
      member = stack.pop()
      onStack.delete(member)
      component.push(member)
    } while (member !== file)
    if (component.length > 1 || graph.get(file).includes(file)) found.push(component)
  }
  for (const file of graph.keys()) if (!indexOf.has(file)) visit(file)
  return found
}

/** One circle through the component, from its first file back to it (a shortest one, by BFS). */
function circleThrough(graph, component) {
  const members = new Set(component)
  const [start] = [...component].sort()
  const previous = new Map([[start, null]])
  const queue = [start]
  while (queue.length > 0) {
    const file = queue.shift()
    for (const target of graph.get(file)) {
      if (!members.has(target)) continue
      if (target === start) {
        const path = [file]
        while (previous.get(path[0]) !== null) path.unshift(previous.get(path[0]))
        return [...path, start]
      }
      if (!previous.has(target)) {
        previous.set(target, file)
        queue.push(target)
      }
    }
  }
  return [start, start]
}

/**
 * The import circles among the TypeScript files below `dir`, one per group of files that reach
 * each other: `circle`, the shortest one through the group's first file, that file repeated at the
 * end (`['a.ts', 'b.ts', 'a.ts']`), and `files`, the whole group; paths relative to `dir`.
 */
export function findImportCycles(dir) {
  const graph = importGraph(sourceFiles(dir))
  return circles(graph).map((component) => ({
    circle: circleThrough(graph, component).map((file) => relative(dir, file)),
    files: component.map((file) => relative(dir, file)).sort(),
  }))
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dirs = process.argv.slice(2)
  let failed = false
  for (const dir of dirs.length > 0 ? dirs : defaultDirs) {
    const absolute = resolve(root, dir)
    for (const { circle, files } of findImportCycles(absolute)) {
      failed = true
      console.error(`import cycle in ${relative(root, absolute) || '.'}: ${circle.join(' → ')}`)
      if (files.length > circle.length - 1)
        console.error(`  (the files that reach each other: ${files.join(', ')})`)
    }
  }
  if (failed) {
    console.error(
      'Break each circle: move the shared types to a module both import, or pass the function in.',
    )
    process.exit(1)
  }
}
