#!/usr/bin/env bash
# Builds the container image from the Containerfile and runs it, on a machine with no container
# daemon: podman builds it (chroot isolation, vfs storage), and the image's own command, user,
# working directory and environment are started with chroot in a copy of its file system, as a
# container runtime would. Checks: the dashboard, the API and the redirect origin answer, the image's
# HEALTHCHECK passes, a user and a token made with the operator command line inside the image create a
# link through the API that redirects, its click placed by the GeoIP data (country, region, city), its
# share card rendered as a PNG, the API reference's files served from node_modules, and SIGTERM ends the
# server with status 0 within a few seconds. Prints the build time and the image size.
#
# The base image is made from Debian's packages (Debian 13 ships Node 20) by mmdebstrap, imported
# once and kept in the store; NODE_IMAGE=docker.io/library/node:20-bookworm-slim uses the official
# image instead where a registry is reachable. Needs root, podman and mmdebstrap
# (`apt-get install -y podman mmdebstrap`). Slow (a full install and build inside the image): run it
# by hand, or through server/test/image/image.test.ts with IMAGE_TEST=1.
#   scripts/check-image.sh               # builds the committed tree (git archive HEAD)
#   CONTEXT=. scripts/check-image.sh     # builds the working tree instead
#   KEEP=1 scripts/check-image.sh        # keeps the image and the copy of its file system
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
store=${IMAGE_STORE:-/var/tmp/linkshort-image}
base_image=localhost/linkshort-base:trixie
node_image=${NODE_IMAGE:-$base_image}
image=localhost/linkshort:check
work=$(mktemp -d /var/tmp/linkshort-image-run-XXXXXX)
app_port=${APP_PORT:-$((20000 + RANDOM % 10000))}
redirect_port=$((app_port + 1))
server_pid=
rootfs=$work/rootfs

pm() { podman --root "$store/storage" --runroot "$store/run" --storage-driver=vfs "$@"; }
step() { printf '\n== %s\n' "$*"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
cleanup() {
  [ -n "$server_pid" ] && kill -KILL "$server_pid" 2>/dev/null || true
  for m in proc dev; do mountpoint -q "$rootfs/$m" 2>/dev/null && umount -l "$rootfs/$m" || true; done
  if [ -n "${KEEP:-}" ]; then
    echo "kept $work and $image"
  else
    rm -rf "$work"
    pm rmi -f "$image" >/dev/null 2>&1 || true
    pm image prune -f >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
mkdir -p "$store"

if [ "$node_image" = "$base_image" ] && ! pm image exists "$base_image"; then
  step "base image from Debian 13 packages (mmdebstrap)"
  # Only the essential packages, Node from Debian, and npm (plain JavaScript) from this machine's
  # install, since Debian's npm package brings a compiler toolchain. The user node (uid 1000) is
  # what the official image provides and the Containerfile runs as. This machine's own certificate
  # authorities (a proxy that inspects TLS) are trusted too, or npm ci cannot reach the registry: this
  # base is for the check only, never for an image that leaves the machine.
  mmdebstrap --quiet --variant=essential --include=nodejs,ca-certificates \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='echo "node:x:1000:1000::/home/node:/bin/sh" >>"$1/etc/passwd"; echo "node:x:1000:" >>"$1/etc/group"; mkdir -p "$1/home/node"; chown 1000:1000 "$1/home/node"' \
    --customize-hook="mkdir -p \"\$1/usr/lib/node_modules\" && cp -a $(npm root -g)/npm \"\$1/usr/lib/node_modules/\" && ln -sf ../lib/node_modules/npm/bin/npm-cli.js \"\$1/usr/bin/npm\" && ln -sf ../lib/node_modules/npm/bin/npx-cli.js \"\$1/usr/bin/npx\"" \
    --customize-hook='cp /usr/local/share/ca-certificates/*.crt "$1/usr/local/share/ca-certificates/" 2>/dev/null || true; chroot "$1" update-ca-certificates >/dev/null' \
    --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/* "$1"/var/log/*' \
    trixie "$store/base.tar" http://deb.debian.org/debian
  pm import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["node"]' "$store/base.tar" "$base_image" >/dev/null
  rm -f "$store/base.tar"
fi
echo "base image: $node_image, $(pm image inspect --format '{{.Size}}' "$node_image" | awk '{printf "%.0f MB", $1 / 1e6}')"

if [ -n "${CONTEXT:-}" ]; then
  context=$(cd "$CONTEXT" && pwd)
else
  context=$work/context
  mkdir -p "$context"
  git -C "$root" archive HEAD | tar -x -C "$context"
fi
step "podman build of $context"
started=$SECONDS
# The docker format keeps HEALTHCHECK, which the OCI format has no field for.
pm build --isolation=chroot --format docker --layers=false --build-arg NODE_IMAGE="$node_image" \
  -f "$context/Containerfile" -t "$image" "$context"
build_s=$((SECONDS - started))
size=$(pm image inspect --format '{{.Size}}' "$image")
echo "build: ${build_s} s; image size: $((size / 1000000)) MB ($size bytes)"

step "the image's configuration"
config=$(pm image inspect --format '{{json .Config}}' "$image")
healthcheck=$(pm image inspect --format '{{json .HealthCheck}}' "$image")
echo "$config"
echo "healthcheck: $healthcheck"
cfg() { node -e "const c = JSON.parse(process.argv[1]); const v = ($2); process.stdout.write(Array.isArray(v) ? v.join('\n') : String(v ?? ''))" "$config"; }
user=$(cfg c c.User)
workdir=$(cfg c c.WorkingDir)
mapfile -t cmd < <(cfg c c.Cmd)
mapfile -t env < <(cfg c c.Env)
[ "$(cfg c c.StopSignal)" = SIGTERM ] || fail "STOPSIGNAL is not SIGTERM"
[ -n "$(cfg c "Object.keys(c.Volumes ?? {}).find((v) => v === '/data')")" ] || fail "/data is not a volume"
[ -n "$user" ] && [ "$user" != root ] && [ "$user" != 0 ] || fail "the image runs as root"
mapfile -t health_cmd < <(node -e "const h = JSON.parse(process.argv[1]); process.stdout.write((h?.Test ?? []).slice(1).join('\n'))" "$healthcheck")
[ "${#health_cmd[@]}" -gt 0 ] || fail "no HEALTHCHECK"

step "the image's file system"
mnt=$(pm image mount "$image")
cp -a "$mnt/." "$rootfs"
pm image unmount "$image" >/dev/null
[ -e "$rootfs/app/node_modules/@remix-run/dev" ] && fail "a dev dependency is in the image"
# The bundles hold the sources and the packages that can be bundled: neither is in the image.
[ -e "$rootfs/app/server" ] && fail "the TypeScript sources are in the image"
[ -e "$rootfs/app/node_modules/tsx" ] && fail "tsx is in the image (the command line runs bundled)"
echo "/app: $(du -sm "$rootfs/app" | cut -f1) MB, node_modules: $(du -sm "$rootfs/app/node_modules" | cut -f1) MB; largest packages:"
# head closes the pipe after 8 lines: no failure of the check (pipefail would end it with 141).
{ du -sm "$rootfs"/app/node_modules/* "$rootfs"/app/node_modules/@*/* 2>/dev/null | sort -rn | head -8 | sed "s|$rootfs/app/||; s/^/  /"; } || true
uid=$(awk -F: -v u="$user" '$1 == u || $3 == u { print $3 ":" $4 }' "$rootfs/etc/passwd")
[ -n "$uid" ] || fail "user $user is not in the image's /etc/passwd"
# What a runtime gives a container: /proc, a few devices, a resolver and a hosts file.
mkdir -p "$rootfs/proc" "$rootfs/dev"
mount -t proc proc "$rootfs/proc"
mount -t tmpfs -o mode=755 tmpfs "$rootfs/dev"
for d in null:1:3 zero:1:5 random:1:8 urandom:1:9; do
  IFS=: read -r name major minor <<<"$d"
  mknod -m 666 "$rootfs/dev/$name" c "$major" "$minor"
done
printf '127.0.0.1 localhost\n::1 localhost\n' >"$rootfs/etc/hosts"
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"

# The ports are random ones so as not to meet another server on this machine (the chroot shares its
# network); everything else is the image's own environment.
# TRUST_PROXY: the click below comes "from" an address in X-Forwarded-For, for the GeoIP check.
run_env=(-i -C "$workdir" "${env[@]}" HOME=/home/node APP_URL="http://127.0.0.1:$app_port" REDIRECT_URL="http://127.0.0.1:$redirect_port" LOG_LEVEL=warn TRUST_PROXY=true)
in_image() { chroot --userspec="$uid" "$rootfs" /usr/bin/env "${run_env[@]}" "$@"; }

step "the image's command: ${cmd[*]} (user $user, in $workdir)"
# chroot and env exec in turn, so the pid is the server's, as PID 1 of a container is.
chroot --userspec="$uid" "$rootfs" /usr/bin/env "${run_env[@]}" "${cmd[@]}" >"$work/server.log" 2>&1 &
server_pid=$!
started=$SECONDS
for _ in $(seq 1 360); do
  curl -sf "http://127.0.0.1:$redirect_port/_/ready" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || {
    cat "$work/server.log"
    fail "the server ended"
  }
  sleep 0.5
done
curl -sf "http://127.0.0.1:$redirect_port/_/ready" >/dev/null || {
  cat "$work/server.log"
  fail "not ready after 180 s"
}
echo "ready after $((SECONDS - started)) s (an empty /data: a new embedded database)"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "http://127.0.0.1:$app_port/")" = 200 ] || fail "dashboard / did not answer 200"
[ "$(code "http://127.0.0.1:$app_port/api/openapi.json")" = 200 ] || fail "API /openapi.json did not answer 200"
[ "$(code "http://127.0.0.1:$redirect_port/_/health")" = 200 ] || fail "redirect origin /_/health did not answer 200"
[ "$(code "http://127.0.0.1:$app_port/docs/assets/swagger-ui-bundle.js")" = 200 ] || fail "the API reference's script (swagger-ui-dist) did not answer 200"
echo "dashboard 200, API openapi.json 200, API reference's script 200, redirect origin health 200"
in_image "${health_cmd[@]}" || fail "the HEALTHCHECK command failed"
echo "HEALTHCHECK (${health_cmd[*]}) exit 0"

step "a link made with a token from the image's command line, and its redirect"
in_image npm run -s cli -- user:create --email image-check@example.com >/dev/null
token=$(in_image npm run -s cli -- token:create --email image-check@example.com --name image-check | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).token')
[ -n "$token" ] || fail "token:create gave no token"
in_image node build/cli.mjs user:list | grep -q image-check@example.com || fail "node build/cli.mjs user:list did not list the user"
link=$(curl -sf -X POST "http://127.0.0.1:$app_port/api/links" -H "authorization: Bearer $token" -H 'content-type: application/json' -d '{"url":"https://example.com/from-the-image","og_title":"From the image"}') ||
  fail "POST /api/links with the token failed"
short=$(node -pe 'JSON.parse(process.argv[1]).short_url' "$link")
id=$(node -pe 'JSON.parse(process.argv[1]).id' "$link")
# A click from an address the GeoIP data places in Paris (FR, Ile-de-France).
redirect=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' -H 'X-Forwarded-For: 2.16.0.1' -A 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' "$short")
case "$redirect" in
  30[1278]" https://example.com/from-the-image") echo "POST /api/links 201, GET $short: $redirect" ;;
  *) fail "GET $short answered '$redirect'" ;;
esac

step "the click's place (GeoIP) and the link's share card"
breakdown() { curl -sf -H "authorization: Bearer $token" "http://127.0.0.1:$app_port/api/links/$id/analytics/breakdown?by=$1" | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).rows.map((r) => r.key).join(",")'; }
place=
for _ in $(seq 1 40); do
  place="$(breakdown country) $(breakdown region) $(breakdown city)"
  [ "$place" != "  " ] && break
  sleep 0.5 # clicks are written in batches
done
[ "$place" = "FR IDF Paris" ] || fail "the click from 2.16.0.1 was placed at '$place', not 'FR IDF Paris'"
echo "click from 2.16.0.1: $place"
card=$(curl -s -o "$work/card.png" -w '%{http_code} %{content_type}' "http://127.0.0.1:$redirect_port/_/og/$id.png")
[ "$card" = "200 image/png" ] && [ "$(head -c 8 "$work/card.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] ||
  fail "the share card answered '$card'"
echo "share card /_/og/$id.png: $card, $(stat -c %s "$work/card.png") bytes"

step "SIGTERM"
started=$(date +%s%N)
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=
stop_ms=$((($(date +%s%N) - started) / 1000000))
[ "$status" = 0 ] || {
  tail -20 "$work/server.log"
  fail "exit status $status after SIGTERM"
}
[ "$stop_ms" -le 10000 ] || fail "SIGTERM took $stop_ms ms"
echo "exit status 0 after $stop_ms ms"

step "image: OK (build ${build_s} s, size $((size / 1000000)) MB)"
