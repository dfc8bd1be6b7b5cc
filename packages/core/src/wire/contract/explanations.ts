/**
 * The long explanation of each message the packages make (what it means, what to do), by the
 * message's id: development builds only. Production builds never read this table
 * (`explain()` reads it under `process.env.NODE_ENV !== 'production'`), so a bundler drops it;
 * the message keeps its short sentence, its code and its link to the id's entry in
 * site/docs/errors.md, which holds the same explanation (a test checks that every id has one).
 *
 * Errors first, by their `PreviewChatErrorCode`; then warnings (what `onWarning` receives).
 */
export const explanations = {
  // network_error
  'no-answer': (base: string) =>
    `Check the connection, the baseUrl (${base}) and, for a server on another origin, that it allows this page's origin (CORS); the client retries reads on its own.`,
  'push-refused': (maxMs: number) =>
    `Check the push URL, and that the user's credentials reach it. It retries with backoff, at most every ${maxMs} ms; reads go on meanwhile.`,
  'answer-cut': () =>
    'The connection dropped while the answer arrived; reads are retried on their own, and a message is never posted again by guess (the record shows whether it was taken).',
  // timeout
  'request-timeout': () => 'The client retries on its own.',
  'submit-timeout': () =>
    'Your draft is kept; the chat shows what the server recorded and lets you send again once nothing runs.',
  // The HTTP statuses: their ids are their codes.
  bad_request: () => 'The server refused the request body; check what was sent.',
  unauthorized: () =>
    'No signed-in user; sign in (or pass the Authorization header) and try again.',
  forbidden: () =>
    'The user lacks the scope for this action (agent:execute to post or stop, agent:read to read).',
  not_found: () => 'The thread or execution does not exist, or belongs to another user.',
  conflict: () =>
    'The request conflicts with the current state of the thread; refresh and try again.',
  payload_too_large: () => 'The request body is too large; send a shorter message.',
  server_error: () => 'The server failed; the client keeps the last known state and retries reads.',
  http_error: () =>
    "The error's `status` says which; `serverCode` and `hint` carry what the server said.",
  'html-page': () => 'Check the baseUrl and any proxy, or the server does not have this route.',
  // invalid_response
  'not-the-contract': () =>
    'Check that the server speaks the agents v2 preview chat API and that the client and server versions match.',
  'not-json': () =>
    'Check that the URL points at the preview chat API and not at an HTML page or a proxy.',
  'not-an-event-stream': () => 'Check the baseUrl and any proxy in between.',
  'no-event-type': () => 'Check that the URL points at the agents v2 chat endpoint.',
  // network_error, conflict, not_found (the queue's)
  'maybe-sent': () =>
    'This server does not tell a second copy of a message from a new one (it does not dedupe by message id), so the client does not send it again by guess: the person decides, from what the conversation shows.',
  'on-its-way': () =>
    'Another tab had begun to send it before this tab heard so: what was sent cannot be changed, so it is shown as sent, and the edit or removal is dropped.',
  'queue-change-refused': () =>
    "The server's queue refused the change and said why: the message was taken up or is being added to the running turn, the queue changed in another tab or device, or the running turn takes no message now. Nothing of the change was made; the queue shows what the server holds.",
  // invalid_request
  'not-waiting': () => 'It was answered already, or is not open in this thread: nothing was sent.',
  'empty-message': () => 'Type a message before sending.',
  'bad-id': () => 'Ids travel as one URL path segment, so use any other non-empty string.',
  'bad-option': () =>
    'Pass what the option names: released: releasedPlatform(), relay: tabRelay(yourRelay) (its part of the engine reads the other tabs), push: ssePush(), websocketPush(), a PushSource or false.',
  'no-runtime': () =>
    'Render it inside <AssistantRuntimeProvider runtime={usePreviewChatRuntime(…)}>, which gives the thread its preview-chat state.',
  'no-provider': () =>
    'Render <PreviewChatProvider client={createPreviewChatClient(…)}> above it in the tree.',
  // stream_cut
  'stream-cut': () =>
    'The client reads the thread until the record shows how the turn ended; nothing is lost.',
  // turn_already_running, agent_error
  'turn-running': () =>
    'Your draft is kept; send it once the running turn ends, or stop that turn.',
  'message-refused': () =>
    'Your draft is kept; send it again once the thread shows what runs (another tab or device may have sent a message at the same moment).',
  // disposed
  disposed: () =>
    'dispose() (or the last listener leaving) ends pending requests; the record shows whether its turn runs.',
  // unsupported
  'no-stop-by-id': () =>
    'The released n8n 2.41 stops a turn by closing its stream: pass released: releasedPlatform() to the client.',
  'stop-elsewhere': () =>
    'The released n8n 2.41 has no Stop by execution id: only the tab whose stream runs the turn can stop it, by closing that stream.',
  // warnings
  'draft-in-memory': () =>
    'The draft survives no reload until the storage works again (private mode, a full quota).',
  'stream-event-skipped': () =>
    'A newer server may send events this client does not know; the turn goes on without them.',
  'push-ignored': () =>
    'Check that the push URL points at the preview chat API; the chat keeps in step through reads.',
  'cache-ignored': () =>
    'What the app put in the query cache for this thread is not a history snapshot; the thread is read.',
  'listener-threw': () => 'The error was caught, so the chat goes on; fix the listener.',
  'unannounced-turn': () =>
    'Pass released: releasedPlatform() to the client to show such a turn live; without it the turn is read to its end, unshown.',
  'no-part': () =>
    'The client lacks the part that takes it: for "relay-received", pass relay: tabRelay(yourRelay) to the client; for a queue action, queue().',
  'relay-ignored': () =>
    'Another build of the app may be open in another tab; tabs then keep in step through reads.',
  'no-execution-started': () =>
    'A server of the contract opens a turn stream with execution-started; the turn is followed all the same, and its execution id is taken from the first event or read that names it.',
  'queue-in-memory': () =>
    "The browser refused to open the queue's store (private mode, storage turned off): messages queued now are sent from this tab, and a reload loses those not sent yet. `queueKept` is false meanwhile.",
  'queue-unwritten': () =>
    "The store refused a write (a full quota, most often): the queue goes on from this tab's memory, `queueKept` is false until a later write is taken, and writes are tried again on a schedule.",
  'stored-queue-unreadable': () =>
    'Another version of the app, or storage edited by hand, left a value this client cannot read; nothing of it is sent.',
  'server-queue-unread': () =>
    "The server's queue is shown as it was last read; the next change the server announces reads it again.",
} satisfies Record<string, (...args: never[]) => string>
