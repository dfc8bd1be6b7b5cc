/**
 * How every browser test here launches Chromium: Debian's build (scripts/ensure-chromium.mjs
 * installs it; no tool downloads a browser), headless, without the background traffic that this
 * machine's closed network refuses.
 */
export const chromiumLaunchOptions = {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
}
