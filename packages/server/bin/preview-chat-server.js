#!/usr/bin/env node
// The `preview-chat-server` command. A file of the repository (not of the build), so that a fresh
// `pnpm install` of the workspace links the bin before anything is built; it runs the built CLI
// (`pnpm build`, or the published package's dist/).
import '../dist/cli.js'
