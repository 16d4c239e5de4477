#!/usr/bin/env bash
# Runs the shared side-by-side benchmark (../shared/bench/run-peers.sh) with agentjail's proxy as
# the column under test. Extra arguments and knobs (REPS, PEERS, WRK_DURATION, ...) pass through.
# Results land in $BENCH_WORK (default /tmp/agentjail-bench)/results/<run-id>/table.md.
set -euo pipefail
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
harness=${HARNESS:-$here/../shared/bench/run-peers.sh}
[ -x "$harness" ] || { echo "bench: harness not found at $harness (set HARNESS=...)" >&2; exit 2; }

port=${PROXY_PORT:-23300}
work=${BENCH_WORK:-/tmp/agentjail-bench}
mkdir -p "$work"
log=$work/agentjail-proxy.out

"$here/bin/agentjail" proxy --policy "$here/bench/policy.yaml" --listen "127.0.0.1:$port" \
  --audit-log "$work/agentjail-audit.jsonl" >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  grep -q "listening on" "$log" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
# bin/agentjail execs java, so $pid is the proxy JVM itself. The jail column runs each command in a
# fresh `agentjail run` session whose project is the harness's work folder (so curl can read it).
jail="$here/bin/agentjail run --policy $here/bench/policy.yaml --project $work --audit-log ${work%/}-jail-audit.jsonl --"
PROXY_UNDER_TEST_PORT=$port PROXY_UNDER_TEST_PID=$pid JAIL_UNDER_TEST_CMD=${JAIL_UNDER_TEST_CMD:-$jail} "$harness" "$@"
