/**
 * What a platform is known not to do (`--flavor`): a check of such a rule that fails is reported as
 * a known limit, with the reason, never as a pass. The reasons name the rules of `docs/rules.md`
 * that describe the platform's behaviour.
 */
export interface PlatformProfile {
  /** Rule id → why this platform does not keep it. */
  limits: Readonly<Record<string, string>>
  /** Appended to the push channel's URL. */
  pushQuery?: () => string
}

const noStop =
  'no Stop by execution id: the DELETE route answers an HTML 404; a turn stops only when its own POST closes (R-N8N-STOP-BY-CLOSING)'

export const platformProfiles = {
  /** The specification, nothing left out. */
  spec: { limits: {} },
  /** The released n8n 2.41 (`fixtures/n8n-2.41/README.md`). */
  'n8n-2.41': {
    limits: {
      'R-WIRE-STARTED':
        'no execution-started: the execution id comes only with done (R-N8N-NO-STARTED)',
      'R-SERVER-ACTIVE-EARLY':
        'no execution-started, and no activeExecutionId in history (R-N8N-HISTORY)',
      'R-WIRE-SNAPSHOT':
        'history has no activeExecutionId and no status on user messages (R-N8N-HISTORY)',
      'R-TURN-SURVIVES': 'closing the POST stream cancels the turn (R-N8N-RELOAD-CANCELS)',
      'R-TURN-SURVIVES-RESUME': 'closing the POST stream cancels the turn (R-N8N-RELOAD-CANCELS)',
      'R-SERVER-ONE-TURN': 'a competing message is accepted: two turns run at once (R-N8N-GATE)',
      'R-SERVER-STOP-RECORD': noStop,
      'R-SERVER-STOP-LATE': noStop,
      'R-STOP-LATE': noStop,
      'R-SERVER-SCOPES': `${noStop}, whoever asks`,
      'R-WIRE-ERRORS':
        'n8n error bodies: numeric codes, a stack trace, 401 without a code (R-N8N-ERRORS)',
      'R-WIRE-REQUEST-BODIES': 'a body that is not JSON is a 500 HTML page (R-N8N-ERRORS)',
    },
    pushQuery: () => `pushRef=${crypto.randomUUID()}`,
  },
  /** The platform's unreleased queue (`R-QUEUE-*`): a message sent while a turn runs is queued. */
  'next-era': {
    limits: {
      'R-SERVER-ONE-TURN':
        'a message sent while a turn runs is queued, not refused (R-QUEUE-WHILE-BUSY)',
    },
  },
} satisfies Record<string, PlatformProfile>

export type PlatformName = keyof typeof platformProfiles
