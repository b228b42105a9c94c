#!/usr/bin/env bash
# Checks that a production install serves: the committed tree (git archive HEAD) is copied to a
# temporary directory, built with every dependency (`npm ci && npm run build`), then reinstalled
# with `npm ci --omit=dev` and started with `npm start`. The dashboard, the API, a redirect and the
# operator command line must answer, and SIGTERM must end the process with status 0. It also checks
# that `npm start` without a build says what to do instead of failing on a missing dev dependency.
#
# Slow (two installs): run it by hand or in CI, not in the test suite.
#   scripts/check-production-install.sh            # keeps nothing
#   KEEP=1 scripts/check-production-install.sh     # leaves the copy for a look
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/linkshort-prod-XXXXXX)
app_port=${APP_PORT:-$((20000 + RANDOM % 10000))}
redirect_port=$((app_port + 1))
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
step() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

step "copy of HEAD into $work"
git -C "$root" archive HEAD | tar -x -C "$work"
cd "$work"

step "npm ci (every dependency) and npm run build"
npm ci --prefer-offline --no-audit --no-fund --loglevel=error
npm run -s build

step "npm ci --omit=dev"
rm -rf node_modules
npm ci --omit=dev --prefer-offline --no-audit --no-fund --loglevel=error
[ -e node_modules/@remix-run/dev ] && fail "a dev dependency is installed"
echo "node_modules: $(du -sm node_modules | cut -f1) MB; largest packages:"
du -sm node_modules/* node_modules/@*/* 2>/dev/null | sort -rn | head -8 | sed 's/^/  /'

export APP_URL="http://127.0.0.1:$app_port" REDIRECT_URL="http://127.0.0.1:$redirect_port" DATA_DIR="$work/data" LOG_LEVEL=warn NODE_ENV=production
unset DATABASE_URL REDIS_URL

step "npm start without the dashboard build: a clear message, not a missing module"
mv build build.kept
if out=$(npm start 2>&1); then fail "npm start without a build started"; fi
echo "$out" | grep -q "npm run build" || fail "no instruction in: $out"
echo "$out" | grep -i "cannot build it" | head -1
mv build.kept build

step "npm start on $APP_URL and $REDIRECT_URL"
npm start >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 240); do
  curl -sf "$REDIRECT_URL/_/ready" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; fail "the server ended"; }
  sleep 0.5
done
curl -sf "$REDIRECT_URL/_/ready" >/dev/null || { cat "$work/server.log"; fail "not ready after 120 s"; }
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "$APP_URL/")" = 200 ] || fail "dashboard / did not answer 200"
[ "$(code "$APP_URL/api/openapi.json")" = 200 ] || fail "GET /api/openapi.json did not answer 200"
link=$(curl -sf -X POST "$APP_URL/api/links" -H 'content-type: application/json' -d '{"url":"https://example.com/prod"}')
short=$(node -pe 'JSON.parse(process.argv[1]).short_url' "$link")
[ "$(code "$short")" = 301 ] || fail "the short link did not redirect"
echo "dashboard 200, openapi.json 200, POST /links 201, $short 301"

step "operator command line"
npm run -s cli -- --version
npm run -s cli -- user:create --email prod-check@example.com >/dev/null
npm run -s cli -- user:list | grep -q prod-check@example.com || fail "user:list does not list the new user"
npm run -s cli -- backup:create --out "$work/backup.jsonl.gz" >/dev/null
[ -s "$work/backup.jsonl.gz" ] || fail "no backup written"
echo "user:create, user:list, backup:create answered"

step "SIGTERM"
# npm start execs node, so the pid npm started is the server's parent: signal the node process.
node_pid=$(pgrep -P "$server_pid" -f build/server.mjs || echo "$server_pid")
kill -TERM "$node_pid"
status=0
wait "$server_pid" || status=$?
server_pid=
[ "$status" = 0 ] || { tail -20 "$work/server.log"; fail "exit status $status after SIGTERM"; }
echo "exit status 0"

step "production install: OK"
