#!/usr/bin/env node
// The `preview-chat-conformance` command: the conformance suite against a live server. A file of the
// repository, as `preview-chat-server.js` is; it runs the package's `./conformance` entry (the built
// dist/conformance.js, or its TypeScript source under `--conditions=@preview-chat/source`).
import { main } from '@preview-chat/server/conformance'

process.exit(await main(process.argv.slice(2)))
