#!/usr/bin/env bash
# Stops n8n and the mock started by start.sh (by their recorded pids / process groups only).
set -uo pipefail
RUN="${N8N_ROOT:-/tmp/preview-chat-n8n}/run"
for name in n8n mock; do
  f="$RUN/$name.pid"
  [ -f "$f" ] || { echo "$name: not started by start.sh"; continue; }
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && { kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid"; }
    echo "$name stopped (pid $pid)"
  else
    echo "$name was not running (stale pid $pid)"
  fi
  rm -f "$f"
done
