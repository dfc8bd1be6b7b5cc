import type { PreviewChatSession, ThreadKey } from '@preview-chat/core'
import {
  useEffect,
  useId,
  useMemo,
  useState,
  useSyncExternalStore,
  type CSSProperties,
  type ReactElement,
  type ReactNode,
} from 'react'
import { engineStateJson, type ActivityKind, type LoggedStep } from './describe'
import { createSessionLogs, type SessionLog, type SessionLogView } from './sessionLog'
import { useLiveSessions } from './useLiveSessions'

/**
 * The corner of the page the button and the panel sit in. Pick the one your app leaves free: a
 * chat's Send button is usually bottom-right, which the default covers on a phone (390 px).
 */
export type DevtoolsPosition = 'bottom-right' | 'bottom-left' | 'top-right' | 'top-left'

export interface PreviewChatDevtoolsProps {
  /** Open the panel on mount. Default `false`: only its button shows. */
  initialIsOpen?: boolean
  /** The corner of the page the button and the panel sit in. Default `'bottom-right'`. */
  position?: DevtoolsPosition
  /**
   * Threads to show besides the ones a session follows now (which are found on their own), e.g.
   * one whose chat is `enabled: false`. Naming a thread creates its session, inert until followed.
   */
  threads?: readonly ThreadKey[]
  /**
   * How many of each session's last actions to keep, from the panel's mount on (closed or open).
   * Default 200.
   */
  maxActions?: number
}

/** Marks the panel's markup; the bench checks that a production bundle does not contain it. */
const MARKER = 'data-preview-chat-devtools'

/**
 * A development panel over the sessions of the nearest `PreviewChatProvider`'s client: for each
 * thread followed now, its status, its last actions through the reducer with their times and
 * commands, its reads, push and relay traffic, and the engine state as JSON to copy.
 */
export function PreviewChatDevtools({
  initialIsOpen = false,
  position = 'bottom-right',
  threads,
  maxActions = 200,
}: PreviewChatDevtoolsProps): ReactElement | null {
  const [open, setOpen] = useState(initialIsOpen)
  const sessions = useLiveSessions(threads)
  const logs = useSessionLogs(sessions, maxActions)
  const panelId = useId()
  const [vertical, horizontal] = position.split('-') as ['top' | 'bottom', 'left' | 'right']
  const corner: CSSProperties = { [vertical]: 8, [horizontal]: 8 }
  const toggle = (
    <button
      type="button"
      style={styles.toggle}
      aria-expanded={open}
      {...(open && { 'aria-controls': panelId })}
      onClick={() => setOpen(!open)}
    >
      preview-chat devtools
    </button>
  )
  const panel = open && (
    <section id={panelId} aria-label="preview-chat devtools" style={styles.panel}>
      <header style={styles.header}>
        <h2 style={styles.title}>preview-chat devtools</h2>
        <span style={styles.muted}>
          {sessions.length} {sessions.length === 1 ? 'session' : 'sessions'}
        </span>
        <button
          type="button"
          style={styles.button}
          aria-label="Close preview-chat devtools"
          onClick={() => setOpen(false)}
        >
          Close
        </button>
      </header>
      {sessions.length === 0 && (
        <p style={styles.muted}>
          No session is followed now: mount a chat (usePreviewChat), or name its thread in
          `threads`.
        </p>
      )}
      {sessions.map((session) => (
        <SessionView
          key={`${session.key.projectId}/${session.key.agentId}/${session.key.threadId}`}
          session={session}
          log={logs.of(session)}
        />
      ))}
    </section>
  )
  return (
    <div
      {...{ [MARKER]: '' }}
      style={{ ...styles.root, ...corner, alignItems: horizontal === 'left' ? 'start' : 'end' }}
    >
      {vertical === 'top' && toggle}
      {panel}
      {vertical === 'bottom' && toggle}
    </div>
  )
}

/**
 * One log per session, each recording from the devtools' mount (closed or open) and kept while
 * the session is followed: inspecting never starts a session or keeps one open.
 */
function useSessionLogs(sessions: readonly PreviewChatSession[], limit: number) {
  const logs = useMemo(() => createSessionLogs(limit), [limit])
  useEffect(() => {
    const listening = sessions.map((session) => logs.of(session).subscribe(ignore))
    return () => listening.forEach((stop) => stop())
  }, [sessions, logs])
  return logs
}

const ignore = () => {}

function SessionView({ session, log }: { session: PreviewChatSession; log: SessionLog }) {
  const view = useSyncExternalStore(log.subscribe, log.getView, log.getView)
  const { threadId, projectId, agentId } = session.key
  const name = `Thread ${threadId}`
  return (
    <article aria-label={name} style={styles.session}>
      <h3 style={styles.subtitle}>
        <span title={`${projectId} / ${agentId}`}>{name}</span>{' '}
        <span style={styles.status} data-status={view.status}>
          {view.status}
        </span>
      </h3>
      <Traffic view={view} />
      <h4 style={styles.label}>Last actions (newest first)</h4>
      {view.steps.length === 0 ? (
        <p style={styles.muted}>No action since the devtools mounted.</p>
      ) : (
        // Focusable: it scrolls, and keyboard users scroll it too.
        <ol aria-label={`Actions of ${name}`} style={styles.log} tabIndex={0}>
          {[...view.steps].reverse().map((step) => (
            <Step key={step.seq} step={step} />
          ))}
        </ol>
      )}
      <EngineState view={view} name={name} />
    </article>
  )
}

function Traffic({ view }: { view: SessionLogView }) {
  const { activity, engine } = view
  const items: [string, ReactNode][] = [
    [
      'Reads',
      `${activity.readsStarted} started, ${activity.snapshots} snapshots, ${activity.readsFailed} failed${engine.reads.inFlight ? ', one in flight' : ''}`,
    ],
    [
      'Push',
      `${engine.push.connected ? 'connected' : 'not connected'}, ${activity.pushMessages} messages, ${activity.pushChanges} changes`,
    ],
    ['Relay', `${activity.relayReceived} received, ${activity.relaySent} sent`],
  ]
  return (
    <dl style={styles.traffic}>
      {items.map(([term, value]) => (
        <div key={term} style={styles.row}>
          <dt style={styles.term}>{term}</dt>
          <dd style={styles.value}>{value}</dd>
        </div>
      ))}
    </dl>
  )
}

function Step({ step }: { step: LoggedStep }) {
  return (
    <li style={styles.step} data-kind={step.kind}>
      <time dateTime={new Date(step.at).toISOString()} style={styles.muted}>
        {clockTime(step.at)}
      </time>{' '}
      <span style={{ ...styles.kind, color: kindColours[step.kind] }}>{step.kind}</span>{' '}
      <code style={styles.code}>{step.type}</code>
      {step.detail && <span> {step.detail}</span>}
      {step.commands.length > 0 && <span style={styles.muted}> → {step.commands.join(', ')}</span>}
    </li>
  )
}

function EngineState({ view, name }: { view: SessionLogView; name: string }) {
  const [shown, setShown] = useState(false)
  const [copied, setCopied] = useState('')
  const json = shown ? engineStateJson(view.engine) : ''
  const copy = () => {
    const text = engineStateJson(view.engine)
    void navigator.clipboard.writeText(text).then(
      () => setCopied('Copied'),
      () => setCopied('Copying failed: select the text instead'),
    )
  }
  return (
    <details onToggle={(event) => setShown(event.currentTarget.open)}>
      <summary style={styles.label}>Engine state</summary>
      <div style={styles.row}>
        <button
          type="button"
          style={styles.button}
          aria-label={`Copy the engine state of ${name}`}
          onClick={copy}
        >
          Copy
        </button>
        <span aria-live="polite" style={styles.muted}>
          {copied}
        </span>
      </div>
      {shown && (
        <pre aria-label={`Engine state of ${name}`} style={styles.pre} tabIndex={0}>
          {json}
        </pre>
      )}
    </details>
  )
}

/** `14:03:07.412`, on this machine's clock. */
function clockTime(at: number): string {
  const date = new Date(at)
  const two = (n: number) => String(n).padStart(2, '0')
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}.${String(date.getMilliseconds()).padStart(3, '0')}`
}

const kindColours: Record<ActivityKind, string> = {
  read: '#7dd3fc',
  push: '#fcd34d',
  relay: '#c4b5fd',
  turn: '#86efac',
  stop: '#fca5a5',
  other: '#cbd5e1',
}

const font = 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace'
const styles = {
  root: {
    position: 'fixed',
    zIndex: 2147483000,
    display: 'flex',
    flexDirection: 'column',
    gap: 6,
    font: `12px/1.4 ${font}`,
  },
  toggle: {
    font: 'inherit',
    padding: '6px 10px',
    borderRadius: 6,
    border: '1px solid #334155',
    background: '#0f172a',
    color: '#e2e8f0',
    cursor: 'pointer',
  },
  panel: {
    width: 'min(620px, calc(100vw - 16px))',
    maxHeight: '70vh',
    overflow: 'auto',
    padding: 10,
    borderRadius: 8,
    border: '1px solid #334155',
    background: '#0f172a',
    color: '#e2e8f0',
    boxShadow: '0 8px 24px rgba(0,0,0,0.35)',
  },
  header: { display: 'flex', alignItems: 'center', gap: 8 },
  title: { font: `600 13px ${font}`, margin: 0, flex: 1 },
  subtitle: { font: `600 12px ${font}`, margin: '0 0 4px', wordBreak: 'break-all' },
  label: { font: `600 11px ${font}`, margin: '6px 0 2px', color: '#94a3b8', cursor: 'default' },
  session: { marginTop: 10, paddingTop: 8, borderTop: '1px solid #1e293b' },
  status: { padding: '0 6px', borderRadius: 4, background: '#1e3a8a', color: '#dbeafe' },
  traffic: { margin: 0 },
  row: { display: 'flex', gap: 8, alignItems: 'baseline' },
  term: { width: 48, color: '#94a3b8' },
  value: { margin: 0 },
  log: { listStyle: 'none', margin: 0, padding: 0, maxHeight: 220, overflow: 'auto' },
  step: { padding: '1px 0', borderBottom: '1px solid #1e293b', wordBreak: 'break-word' },
  kind: { display: 'inline-block', width: 38 },
  code: { font: 'inherit', color: '#f8fafc' },
  muted: { color: '#94a3b8' },
  button: {
    font: 'inherit',
    padding: '2px 8px',
    borderRadius: 4,
    border: '1px solid #475569',
    background: '#1e293b',
    color: '#e2e8f0',
    cursor: 'pointer',
  },
  pre: {
    margin: '4px 0 0',
    padding: 6,
    maxHeight: 260,
    overflow: 'auto',
    background: '#020617',
    borderRadius: 4,
    whiteSpace: 'pre',
  },
} satisfies Record<string, CSSProperties>
