-- preview-chat's record in Postgres: the state every instance of a deployment shares.
--
-- Applied once, in one transaction, by the migrator (`migrate.ts`), which records it in
-- `preview_chat_migrations`. Never edit a migration that has shipped: add `002_….sql`.
-- Every table starts with `preview_chat_`, so the record can share a schema with an app's own.
--
-- The moments of the record (`created_at`, `started_at`, `ended_at`) are the ISO-8601 strings the
-- contract carries, kept as the server wrote them and given back unchanged: no decision is made
-- with them. The one moment the database decides with, a lease's expiry, is a `timestamptz`
-- written and compared by the database's own clock.

-- One preview thread. Thread ids are the client's (it may mint them), so a thread is named by its
-- owner, project and agent as well: one user's ids can never reach another's thread.
CREATE TABLE preview_chat_threads (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  owner_id text NOT NULL,
  project_id text NOT NULL,
  agent_id text NOT NULL,
  thread_id text NOT NULL,
  created_at text NOT NULL,
  -- The running execution, set when it is admitted and cleared when it ends: the one-turn gate.
  -- Admission is a conditional UPDATE of this column (`WHERE active_execution_id IS NULL`).
  active_execution_id text,
  UNIQUE (owner_id, project_id, agent_id, thread_id)
);

-- One execution: one turn, from a message or from a resume.
CREATE TABLE preview_chat_executions (
  id text PRIMARY KEY,
  thread bigint NOT NULL REFERENCES preview_chat_threads (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('message', 'resume')),
  status text NOT NULL CHECK (status IN ('running', 'success', 'error', 'cancelled', 'interrupted')),
  -- Why it ended as `error` (a message fit for the user) and its code (`agent_crashed`, …).
  error text,
  error_code text,
  -- The instance that runs it: it alone can cancel it (others relay), and its lease keeps it alive.
  main_id text NOT NULL,
  started_at text NOT NULL,
  ended_at text,
  CHECK ((status = 'running') = (ended_at IS NULL))
);
CREATE INDEX preview_chat_executions_thread ON preview_chat_executions (thread);
-- The sweeper's question: which running executions belong to an instance whose lease expired.
CREATE INDEX preview_chat_executions_running ON preview_chat_executions (main_id)
  WHERE status = 'running';

-- The recorded timeline, one row a message, in the order the messages were first recorded
-- (`position`, from one sequence for the whole table: a history read is one index range scan).
-- A snapshot of a running turn rewrites its own messages in place, keeping their positions.
CREATE TABLE preview_chat_messages (
  thread bigint NOT NULL REFERENCES preview_chat_threads (id) ON DELETE CASCADE,
  position bigint GENERATED ALWAYS AS IDENTITY,
  id text NOT NULL,
  execution_id text NOT NULL,
  role text NOT NULL CHECK (role IN ('user', 'assistant')),
  execution_status text NOT NULL
    CHECK (execution_status IN ('running', 'success', 'error', 'cancelled', 'interrupted')),
  execution_error text,
  created_at text NOT NULL,
  -- The client's `messageId` of a user message, where it sent one.
  client_message_id text,
  -- The message's parts (`MessagePart[]`), parsed again whenever they are read.
  content jsonb NOT NULL CHECK (jsonb_typeof(content) = 'array'),
  PRIMARY KEY (thread, position),
  UNIQUE (thread, id)
);
CREATE INDEX preview_chat_messages_execution ON preview_chat_messages (execution_id);

-- A suspended run (a tool call that waits for a person), resumable or cancellable by its id.
-- The thread's open suspensions are its `open` runs, in the order they opened (`position`).
CREATE TABLE preview_chat_runs (
  run_id text PRIMARY KEY,
  thread bigint NOT NULL REFERENCES preview_chat_threads (id) ON DELETE CASCADE,
  position bigint GENERATED ALWAYS AS IDENTITY,
  execution_id text NOT NULL,
  -- The suspension as the agent gave it (`SuspendedPayload`: toolCallId, runId, toolName, input).
  payload jsonb NOT NULL CHECK (jsonb_typeof(payload) = 'object'),
  state text NOT NULL CHECK (state IN ('open', 'resumed', 'cancelled'))
);
CREATE INDEX preview_chat_runs_open ON preview_chat_runs (thread, position) WHERE state = 'open';

-- The client message ids a thread accepted: "per (agent, user, thread, messageId)".
CREATE TABLE preview_chat_message_ids (
  thread bigint NOT NULL REFERENCES preview_chat_threads (id) ON DELETE CASCADE,
  message_id text NOT NULL,
  PRIMARY KEY (thread, message_id)
);

-- The server's queue of a thread (the next-era flavor). Items stay after they leave the queue, so
-- that a late edit or removal answers 409 (started) rather than 404. `id` is the queue id the
-- client sees (a numeric string, unique in the record); `position` orders the pending items.
CREATE TABLE preview_chat_queue_items (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  thread bigint NOT NULL REFERENCES preview_chat_threads (id) ON DELETE CASCADE,
  position bigint NOT NULL,
  message text NOT NULL,
  client_message_id text,
  created_at text NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'steering', 'started', 'steered', 'removed')),
  -- The running execution a `steering` item is reserved for.
  steering_execution_id text,
  -- The execution that took the item up (`started`) or that it joined (`steered`).
  execution_id text
);
CREATE INDEX preview_chat_queue_items_thread ON preview_chat_queue_items (thread, position);

-- The lease of each running instance: renewed every lease period while it lives. Its expiry is
-- written and compared by the database's clock (`now()`), never by an instance's.
CREATE TABLE preview_chat_instances (
  main_id text PRIMARY KEY,
  lease_expires_at timestamptz NOT NULL
);
