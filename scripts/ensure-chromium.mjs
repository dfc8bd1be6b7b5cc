// The end-to-end tests drive Debian's Chromium (never a browser that a tool downloads). Install
// it when it is missing and we may (root, apt-get); otherwise say what to install.
import { execSync } from 'node:child_process'
import { existsSync } from 'node:fs'

const chromium = '/usr/bin/chromium'

if (!existsSync(chromium)) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0
  if (!isRoot || !existsSync('/usr/bin/apt-get')) {
    console.error(
      `${chromium} is missing. Install Debian's Chromium (as root: apt-get update && apt-get install -y chromium), then run the tests again.`,
    )
    process.exit(1)
  }
  console.log(`${chromium} is missing: installing Debian's chromium package…`)
  execSync('apt-get update && apt-get install -y --no-install-recommends chromium', {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  })
  if (!existsSync(chromium)) {
    console.error(`apt-get ran, but ${chromium} is still missing.`)
    process.exit(1)
  }
}
console.log(`Using ${execSync(`${chromium} --version`).toString().trim()}`)
