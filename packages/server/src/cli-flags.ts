/**
 * The reference server's command line, as one table: `cli.ts` parses its flags from it and prints
 * it for `--help`, and the docs site's server page renders the same table (site/prepare.mjs), so
 * the page, the help and what the CLI accepts cannot differ.
 */
export interface CliFlag {
  /** Without the leading `--`. */
  readonly name: string
  /** What follows the flag (`<origin>`), or none for a switch. */
  readonly value?: string
  /** The value when the flag is left out, as the user would write it. */
  readonly default?: string
  /** Given more than once, each counts. */
  readonly multiple?: boolean
  /** One sentence or two, plain text with `code` spans (the site renders it as Markdown). */
  readonly description: string
}

export const cliFlags: readonly CliFlag[] = [
  {
    name: 'port',
    value: '<port>',
    default: '4317',
    description:
      'The port to listen on; `0` takes any free port (the URL is printed). With `--mains N`, the first of N consecutive ports.',
  },
  {
    name: 'host',
    value: '<host>',
    default: '127.0.0.1',
    description: 'The address to listen on.',
  },
  {
    name: 'delta-ms',
    value: '<ms>',
    default: '40',
    description: "The scripted demo agent's pause between two deltas of its answer.",
  },
  {
    name: 'snapshot-ms',
    value: '<ms>',
    default: '250',
    description: "How often the running turn's record is written while it streams.",
  },
  {
    name: 'store',
    value: 'postgres://…',
    description:
      'Keep the record in Postgres: this process is then one instance of a deployment. Without it, memory (one process).',
  },
  {
    name: 'bus',
    value: 'redis://…',
    description:
      'Relay push and Stop between instances over Redis (`rediss://` too). Without it, in-process.',
  },
  {
    name: 'main-id',
    value: '<id>',
    default: 'main-1', // main-N, with --mains N

    description:
      "This instance's name in the record (who holds a running turn's lease); with `--mains`, `main-1` to `main-N`.",
  },
  {
    name: 'lease-ms',
    value: '<ms>',
    default: '10000',
    description:
      "With `--store`: how long a running turn's lease lasts without renewal before another instance may take the turn over. More than 0.",
  },
  {
    name: 'mains',
    value: '<n>',
    default: '1',
    description:
      "For tests only: N servers in this process on consecutive ports, sharing one memory store and relaying Stop to each other (a load balancer's view). Not with `--store` or `--bus`.",
  },
  {
    name: 'cors',
    value: '<origin>|*',
    description:
      'Answer a page on that origin (its preflight, credentials and all): a page served from another host with an absolute `baseUrl`.',
  },
  {
    name: 'allowed-host',
    value: '<name>',
    multiple: true,
    description:
      'A `Host` name to accept besides the loopback ones (the server refuses others, against DNS rebinding). Give it once per name.',
  },
  {
    name: 'flavor',
    value: 'spec|n8n-2.41|next-era',
    default: 'spec',
    description:
      "Which backend to be: the contract (`spec`), the released n8n 2.41 (its cookie and `browser-id` header), or the platform's unreleased queue protocol (`next-era`).",
  },
  {
    name: 'push-backend',
    value: 'sse|websocket',
    default: 'sse',
    description: "With `--flavor n8n-2.41` only: the push channel n8n's instance would run.",
  },
  { name: 'help', description: 'Print this and exit.' },
]

/** `--name <value>` as the usage line and the table write it. */
export function flagSynopsis(flag: CliFlag): string {
  return `--${flag.name}${flag.value === undefined ? '' : ` ${flag.value}`}`
}

/** The `--help` text: the usage line, then each flag with its default and what it does. */
export function renderHelp(): string {
  const synopses = cliFlags.map(flagSynopsis)
  const width = Math.max(...synopses.map((synopsis) => synopsis.length))
  const lines = cliFlags.map((flag) => {
    const after = [
      flag.description.replace(/`/g, ''),
      ...(flag.default === undefined ? [] : [`(default: ${flag.default})`]),
      ...(flag.multiple ? ['(repeatable)'] : []),
    ].join(' ')
    // Wrapped at 100 columns, the continuation lines under the first.
    const indent = ' '.repeat(width + 4)
    const wrapped: string[] = []
    let line = ''
    for (const word of after.split(' ')) {
      if (line !== '' && indent.length + line.length + 1 + word.length > 100) {
        wrapped.push(line)
        line = word
      } else line = line === '' ? word : `${line} ${word}`
    }
    wrapped.push(line)
    const [first, ...rest] = wrapped
    return [`  ${flagSynopsis(flag).padEnd(width)}  ${first}`]
      .concat(rest.map((next) => `${indent}${next}`))
      .join('\n')
  })
  return [
    `Usage: preview-chat-server [options]`,
    '',
    'The reference backend for development. Users: alice, bob, carol, by',
    '`Authorization: Bearer <name>` or the cookie `preview-chat-user=<name>` (no real authentication).',
    '',
    'Options:',
    ...lines,
  ].join('\n')
}

/** The site's table of the flags (Markdown), from the same rows as `--help`. */
export function renderFlagsMarkdown(): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|')
  const rows = cliFlags.map(
    (flag) =>
      `| \`${cell(flagSynopsis(flag))}\` | ${flag.default === undefined ? '' : `\`${flag.default}\``} | ${cell(flag.description)}${flag.multiple ? ' (repeatable)' : ''} |`,
  )
  return ['| flag | default | what it does |', '| --- | --- | --- |', ...rows, ''].join('\n')
}
