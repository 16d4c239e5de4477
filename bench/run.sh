#!/usr/bin/env bash
# Runs the shared side-by-side benchmark (../shared/bench/run-peers.sh) with agentjail's proxy as
# the column under test: one proxy that relays HTTPS as opaque CONNECT tunnels (network.tunnel) for
# the tunnel rows, and one that intercepts it (the default) for the interception rows. Extra
# arguments and knobs (REPS, PEERS, WRK_DURATION, ...) pass through.
# Results land in $BENCH_WORK (default /tmp/agentjail-bench)/results/<run-id>/table.md.
set -euo pipefail
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
harness=${HARNESS:-$here/../shared/bench/run-peers.sh}
[ -x "$harness" ] || { echo "bench: harness not found at $harness (set HARNESS=...)" >&2; exit 2; }

port=${PROXY_PORT:-23300}
mitm_port=${PROXY_MITM_PORT:-23301}
work=${BENCH_WORK:-/tmp/agentjail-bench}
mkdir -p "$work/tls"

# The harness signs its origin's certificate with $work/tls/ca.{pem,key} and reuses them when present;
# make them now so the policies can name the origin CA (tls.upstream_ca) before the harness starts.
if [[ ! -s $work/tls/ca.pem || ! -s $work/tls/ca.key ]]; then
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj "/CN=bench local origin CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$work/tls/ca.key" -out "$work/tls/ca.pem" 2>/dev/null
fi
policy() {  # policy FILE [tunnel]
  {
    cat "$here/bench/policy.yaml"
    [[ ${2:-} == tunnel ]] && echo '  tunnel: ["upstream.test:28443"]'
    printf 'tls:\n  upstream_ca: ["%s"]\n' "$work/tls/ca.pem"
  } >"$1"
}
policy "$work/agentjail-tunnel.yaml" tunnel
policy "$work/agentjail-intercept.yaml"

pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done' EXIT
start_proxy() {  # start_proxy POLICY PORT NAME
  local log=$work/agentjail-$3.out
  "$here/bin/agentjail" proxy --policy "$1" --listen "127.0.0.1:$2" --ca-dir "$work/agentjail-ca" \
    --audit-log "$work/agentjail-$3-audit.jsonl" >"$log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do
    grep -q "listening on" "$log" 2>/dev/null && return
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
  done
}
# bin/agentjail keeps class-data archives (and, for `run` on JDK >= 25, an AOT cache) in the user's cache, made
# by the first JVM of a new build: make them now, outside the measurements, as a user's first sessions would.
warm_caches() {
  local log=$work/agentjail-warmup.out p i
  "$here/bin/agentjail" proxy --policy "$work/agentjail-tunnel.yaml" --listen 127.0.0.1:0 --ca-dir "$work/agentjail-ca" \
    --audit-log "$work/agentjail-warmup-audit.jsonl" >"$log" 2>&1 &
  p=$!
  for i in $(seq 1 100); do grep -q "listening on" "$log" 2>/dev/null && break; sleep 0.1; done
  local addr
  addr=$(sed -n 's/.*listening on \([0-9.]*:[0-9]*\).*/\1/p' "$log" | head -n 1)
  # A denied request: the proxy's request path without the origin (not started yet).
  [[ -n $addr ]] && curl -s -o /dev/null -x "http://$addr" http://denied.test/ || true
  kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true
  mkdir -p "$work/warmup-project"
  "$here/bin/agentjail" run --project "$work/warmup-project" --audit-log "$work/agentjail-warmup-audit.jsonl" -- true \
    >/dev/null 2>&1 || true
  # The AOT cache is assembled by a detached training session: wait for it to finish (bounded).
  local cache=${XDG_CACHE_HOME:-$HOME/.cache}/agentjail
  for i in $(seq 1 120); do
    compgen -G "$cache/aot-training.*" >/dev/null || compgen -G "$cache/native-extract.*" >/dev/null || break
    sleep 1
  done
}
warm_caches
start_proxy "$work/agentjail-tunnel.yaml" "$port" tunnel
start_proxy "$work/agentjail-intercept.yaml" "$mitm_port" intercept
# bin/agentjail execs java, so each pid is a proxy JVM itself. The jail column runs each command in a
# fresh `agentjail run` session whose project is the harness's work folder (so curl can read it); its
# HTTPS is tunnelled, since the harness's in-jail curl checks the origin's own certificate.
jail="$here/bin/agentjail run --policy $work/agentjail-tunnel.yaml --project $work --audit-log ${work%/}-jail-audit.jsonl --"
# With every peer and 3 rounds the harness needs ~930 s before its start-up step (hyperfine), which its default
# 900 s budget then skips.
export MAX_TOTAL_S=${MAX_TOTAL_S:-1200}
PROXY_UNDER_TEST_PORT=$port PROXY_UNDER_TEST_PID=${pids[0]} \
  PROXY_UNDER_TEST_MITM_PORT=$mitm_port PROXY_UNDER_TEST_CA=$work/agentjail-ca/ca.pem \
  JAIL_UNDER_TEST_CMD=${JAIL_UNDER_TEST_CMD:-$jail} "$harness" "$@"
