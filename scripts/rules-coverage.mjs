// `pnpm check:rules`: every rule of docs/rules.md is named by a test, or says why it cannot be.
//
// A rule is a heading `### R-SOME-ID` in docs/rules.md; its text runs to the next heading. It is
// covered when its id appears in a test file (a describe or test title, e.g. `it('… [R-STOP-LATE]')`),
// or when docs/rules-tests.json maps it to a test by file and title (for tests whose titles cannot
// carry it); a rule with a line `untestable: <why>` needs neither. The script also fails on an id
// that a test names but docs/rules.md does not define (a typo, a rule removed), on a rule defined
// twice, and on a mapping whose file no longer has a test of that title.
//
// Test files: packages/**/__tests__/**/*.test.ts(x), e2e/**/*.spec.ts, bench/src/__tests__/**,
// stories/**/*.stories.tsx (their play functions). `--list` prints each rule with the tests that
// name it (`--json`: as JSON). Plain Node, no dependencies.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const rulesPath = join(root, 'docs/rules.md')
const mappingPath = join(root, 'docs/rules-tests.json')
const idPattern = /\bR-[A-Z0-9]+(?:-[A-Z0-9]+)+\b/g

/** The rules of docs/rules.md: id → { line, untestable reason or null }. */
function readRules() {
  const rules = new Map()
  const problems = []
  let current = null
  readFileSync(rulesPath, 'utf8')
    .split('\n')
    .forEach((line, index) => {
      const heading = /^(#{1,6})\s+(.*)$/.exec(line)
      if (heading) {
        current = null
        const id = /^(R-[A-Z0-9]+(?:-[A-Z0-9]+)+)\s*$/.exec(heading[2])?.[1]
        // A heading meant as a rule but not of the id's form would silently be no rule at all.
        if (!id && /^R-/.test(heading[2]))
          problems.push(
            `line ${index + 1}: "${heading[2]}" is not a rule id (R-AREA-NAME: two parts or more, capitals)`,
          )
        if (heading[1] !== '###' || !id) return
        if (rules.has(id))
          problems.push(`${id} is defined twice (lines ${rules.get(id).line} and ${index + 1})`)
        current = { id, line: index + 1, untestable: null }
        rules.set(id, current)
        return
      }
      const untestable = /^untestable:\s*(.*)$/.exec(line)
      if (current && untestable) {
        if (untestable[1].trim() === '')
          problems.push(`${current.id}: "untestable:" needs a reason`)
        else current.untestable = untestable[1].trim()
      }
    })
  return { rules, problems }
}

function walk(dir, accept, found = []) {
  if (!existsSync(dir)) return found
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.'))
      continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(path, accept, found)
    else if (accept(relative(root, path))) found.push(path)
  }
  return found
}

const isTestFile = (path) =>
  (path.startsWith('packages/') && /(^|\/)__tests__\//.test(path) && /\.test\.tsx?$/.test(path)) ||
  (path.startsWith('e2e/') && path.endsWith('.spec.ts')) ||
  (path.startsWith('bench/src/__tests__/') && /\.tsx?$/.test(path)) ||
  (path.startsWith('scripts/__tests__/') && /\.test\.ts$/.test(path)) ||
  (path.startsWith('stories/') && path.endsWith('.stories.tsx'))

/** The title on `line` that carries `id` (the quoted string around it), without the ids. */
function titleAround(line, id) {
  for (const quote of ["'", '"', '`']) {
    const found = new RegExp(`${quote}([^${quote}]*\\b${id}\\b[^${quote}]*)${quote}`).exec(line)
    if (found) return found[1].replace(/\s*\[R-[A-Z0-9 -]+\]/g, '').trim()
  }
  return line.trim()
}

/** id → the tests that name it: { file, title }. */
function scanTests() {
  const named = new Map()
  const files = ['packages', 'e2e', 'bench/src/__tests__', 'scripts/__tests__', 'stories'].flatMap(
    (dir) => walk(join(root, dir), isTestFile),
  )
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      for (const [id] of line.matchAll(idPattern)) {
        const title = titleAround(line, id)
        named.set(id, [...(named.get(id) ?? []), { file: relative(root, file), title }])
      }
    }
  }
  return { named, files: files.length }
}

/** id → tests of docs/rules-tests.json whose file still has that title. */
function readMapping(problems) {
  const mapped = new Map()
  if (!existsSync(mappingPath)) return mapped
  const { rules = {} } = JSON.parse(readFileSync(mappingPath, 'utf8'))
  for (const [id, tests] of Object.entries(rules)) {
    for (const { file, test } of tests) {
      const path = join(root, file)
      if (!existsSync(path) || !readFileSync(path, 'utf8').includes(test)) {
        problems.push(`docs/rules-tests.json: ${id} → ${file} has no test "${test}"`)
        continue
      }
      mapped.set(id, [...(mapped.get(id) ?? []), { file, title: test }])
    }
  }
  return mapped
}

const { rules, problems } = readRules()
const { named, files } = scanTests()
const mapped = readMapping(problems)

for (const [id, where] of named)
  if (!rules.has(id))
    problems.push(
      `${id} is named by ${[...new Set(where.map((test) => test.file))].join(', ')} ` +
        'but not defined in docs/rules.md',
    )
for (const id of mapped.keys())
  if (!rules.has(id)) problems.push(`docs/rules-tests.json maps ${id}, which docs/rules.md lacks`)

if (process.argv.includes('--list')) {
  const listed = Object.fromEntries(
    [...rules.values()].map((rule) => [
      rule.id,
      rule.untestable
        ? { untestable: rule.untestable }
        : { tests: [...(named.get(rule.id) ?? []), ...(mapped.get(rule.id) ?? [])] },
    ]),
  )
  if (process.argv.includes('--json')) console.log(JSON.stringify(listed, null, 2))
  else
    for (const [id, { untestable, tests }] of Object.entries(listed)) {
      console.log(id)
      if (untestable) console.log(`  untestable: ${untestable}`)
      for (const test of tests ?? []) console.log(`  ${test.file}: ${test.title}`)
    }
}

const uncovered = [...rules.values()].filter(
  (rule) => !rule.untestable && !named.has(rule.id) && !mapped.has(rule.id),
)
const untestable = [...rules.values()].filter((rule) => rule.untestable)

for (const rule of uncovered) console.log(`no test names ${rule.id} (docs/rules.md:${rule.line})`)
for (const problem of problems) console.log(problem)

const summary =
  `${rules.size} rules: ${rules.size - untestable.length - uncovered.length} named by tests ` +
  `(${files} test files scanned), ${untestable.length} untestable, ${uncovered.length} without a test`
if (uncovered.length > 0 || problems.length > 0) {
  console.log(`rules coverage failed: ${summary}.`)
  console.log(
    "Put the id in the title of a test that checks the rule (`it('… [R-ID]')`), or say in " +
      'docs/rules.md why it cannot be tested (`untestable: <why>`).',
  )
  process.exit(1)
}
console.log(`rules coverage: ${summary}.`)
