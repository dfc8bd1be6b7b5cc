#!/usr/bin/env bash
# Starts the OpenAI mock and n8n 2.41.1 (Node 24, SQLite) in the background; waits until both are healthy.
# Env knobs: N8N_PORT (5678), MOCK_PORT (18080), MOCK_WORDS (50), MOCK_DELAY_MS (50),
#            N8N_PUSH_BACKEND (sse|websocket, default sse), N8N_RUNNERS_BROKER_PORT (first free from 5679)
set -euo pipefail
KIT="$(cd "$(dirname "$0")" && pwd)"
ROOT="${N8N_ROOT:-/tmp/preview-chat-n8n}"
NODE_DIR="$ROOT/node24"; APP_DIR="$ROOT/app"; LOGS="$ROOT/logs"; RUN="$ROOT/run"
N8N_PORT="${N8N_PORT:-5678}"
MOCK_PORT="${MOCK_PORT:-18080}"
MOCK_WORDS="${MOCK_WORDS:-50}"; MOCK_DELAY_MS="${MOCK_DELAY_MS:-50}"
PUSH="${N8N_PUSH_BACKEND:-sse}"
mkdir -p "$LOGS" "$RUN" "$ROOT/data"

[ -x "$NODE_DIR/bin/node" ] && [ -f "$APP_DIR/node_modules/n8n/bin/n8n" ] || { echo "not installed: run $KIT/install.sh" >&2; exit 1; }

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
alive() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }
t0=$(date +%s)

# --- mock (system Node 20 is enough: plain node:http) ---
if alive mock; then
  echo "mock already running (pid $(cat "$RUN/mock.pid")) on $(cat "$RUN/mock.port")"
else
  listening "$MOCK_PORT" && { echo "port $MOCK_PORT is taken by something else; set MOCK_PORT" >&2; exit 1; }
  setsid nohup nice -n 10 node "$KIT/mock-openai.mjs" --port "$MOCK_PORT" --words "$MOCK_WORDS" --delay "$MOCK_DELAY_MS" \
    >>"$LOGS/mock.log" 2>&1 < /dev/null &
  echo $! > "$RUN/mock.pid"; echo "$MOCK_PORT" > "$RUN/mock.port"
  for _ in $(seq 1 50); do listening "$MOCK_PORT" && break; sleep 0.1; done
  listening "$MOCK_PORT" || { echo "mock did not start; see $LOGS/mock.log" >&2; exit 1; }
  echo "mock started (pid $(cat "$RUN/mock.pid")) on http://127.0.0.1:$MOCK_PORT/v1"
fi

# --- n8n (Node 24 first on PATH, for n8n only) ---
if alive n8n; then
  echo "n8n already running (pid $(cat "$RUN/n8n.pid")) on $(cat "$RUN/n8n.port")"
else
  listening "$N8N_PORT" && { echo "port $N8N_PORT is taken by something else; set N8N_PORT" >&2; exit 1; }
  BROKER="${N8N_RUNNERS_BROKER_PORT:-}"
  if [ -z "$BROKER" ]; then
    for p in $(seq 5679 5779); do [ "$p" != "$N8N_PORT" ] && ! listening "$p" && { BROKER=$p; break; }; done
  fi
  (
    export PATH="$NODE_DIR/bin:$PATH"
    export N8N_PORT N8N_LISTEN_ADDRESS=127.0.0.1 N8N_HOST=127.0.0.1 N8N_PROTOCOL=http
    export N8N_USER_FOLDER="$ROOT/data" DB_TYPE=sqlite N8N_SECURE_COOKIE=false
    export N8N_DIAGNOSTICS_ENABLED=false N8N_VERSION_NOTIFICATIONS_ENABLED=false N8N_TEMPLATES_ENABLED=false
    export N8N_PERSONALIZATION_ENABLED=false
    export N8N_PUSH_BACKEND="$PUSH" N8N_RUNNERS_BROKER_PORT="$BROKER"
    export N8N_LOG_OUTPUT=console N8N_LOG_LEVEL="${N8N_LOG_LEVEL:-info}"
    exec setsid nohup nice -n 10 node "$APP_DIR/node_modules/n8n/bin/n8n" start >>"$LOGS/n8n.log" 2>&1 < /dev/null
  ) &
  echo $! > "$RUN/n8n.pid"; echo "$N8N_PORT" > "$RUN/n8n.port"
  echo "N8N_PORT=$N8N_PORT MOCK_PORT=$MOCK_PORT N8N_RUNNERS_BROKER_PORT=$BROKER N8N_PUSH_BACKEND=$PUSH" > "$RUN/env"
  echo "n8n starting (pid $(cat "$RUN/n8n.pid"), push=$PUSH, runners broker port $BROKER) ..."
fi

# --- wait until healthy ---
for _ in $(seq 1 300); do
  if curl -fsS "http://127.0.0.1:$N8N_PORT/healthz/readiness" >/dev/null 2>&1; then
    echo "n8n healthy on http://127.0.0.1:$N8N_PORT after $(( $(date +%s) - t0 ))s"
    echo "logs: $LOGS/n8n.log  $LOGS/mock.log   pids/ports: $RUN/"
    exit 0
  fi
  alive n8n || { echo "n8n exited; last lines of $LOGS/n8n.log:" >&2; tail -30 "$LOGS/n8n.log" >&2; exit 1; }
  sleep 1
done
echo "n8n not healthy after 300s; see $LOGS/n8n.log" >&2; exit 1
