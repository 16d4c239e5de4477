#!/usr/bin/env bash
# Wall time of real work inside the jail with the exec and file audit off, exec only, and exec + files
# (docs/benchmarks.md, issue 20): make -j2 of a generated C project, unpacking a mid-size node_modules tree (the file
# side of npm ci), npm ci of that project from a local cache, a burst of 100,000 opens for writing, and the same burst
# as a bare C loop timed inside the jail (microseconds per iteration, no session around it). The three settings
# alternate within each round, in an order that turns from round to round, so they share the machine's minutes;
# ROUNDS (default 3) rounds. bench/notif-floor.c measures what the notification alone costs such a loop.
#
# A real C project too, when C_PROJECT names its source (a directory or a tarball): C_PROJECT_BUILD (default
# "make -j2") and C_PROJECT_CLEAN (default "make clean") run in its top directory. Lua 5.4's source, for example:
#   C_PROJECT=lua5.4_5.4.4.orig.tar.gz C_PROJECT_BUILD="make -j2 -C src linux-noreadline" bench/audit.sh
set -euo pipefail
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
rounds=${ROUNDS:-3}
work=$(mktemp -d /tmp/agentjail-audit-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The sessions run a copy of the CLI: bin/agentjail rebuilds its jar when a source changes, which must not happen
# between two rounds (or within one) because someone edits the checkout meanwhile.
"$here/bin/agentjail" --version >/dev/null
mkdir -p "$work/cli/bin" "$work/cli/launcher/target"
cp "$here/bin/agentjail" "$work/cli/bin/"
cp "$here/launcher/target/agentjail.jar" "$work/cli/launcher/target/"
agentjail="$work/cli/bin/agentjail"

for setting in off exec files; do
  case $setting in
    off) printf 'version: 1\naudit: {exec: off, files: off}\n' ;;
    exec) printf 'version: 1\naudit: {exec: on, files: off}\n' ;;
    files) printf 'version: 1\naudit: {exec: on, files: on}\n' ;;
  esac > "$work/$setting.yaml"
done

# A C project: 200 translation units and a Makefile.
mkdir -p "$work/c/src"
for i in $(seq 1 200); do
  cat > "$work/c/src/u$i.c" <<C
#include <stdio.h>
#include <string.h>
int u${i}_f(const char *s) { int h = $i; for (size_t k = 0; k < strlen(s); k++) h = h * 31 + s[k]; return h; }
int u${i}_g(int x) { char b[64]; snprintf(b, sizeof b, "%d-%d", x, $i); return u${i}_f(b); }
C
done
cat > "$work/c/Makefile" <<'M'
SRC := $(wildcard src/*.c)
OBJ := $(SRC:src/%.c=out/%.o)
all: out/lib.a
out/%.o: src/%.c
	@mkdir -p out
	$(CC) -O1 -c -o $@ $<
out/lib.a: $(OBJ)
	ar rcs $@ $^
clean:
	rm -rf out
M

# A node project with a few well-known dependencies, installed once on the host (outside any jail): the jailed
# workload is the file side of npm ci, unpacking that node_modules tree (thousands of small files) afresh. npm ci
# itself would need the registry in the jail's allowlist, or a complete offline cache.
mkdir -p "$work/npm"
cat > "$work/npm/package.json" <<'J'
{"name": "bench", "version": "1.0.0", "private": true,
 "dependencies": {"express": "^4", "lodash": "^4", "eslint": "^8", "typescript": "^5"}}
J
have_npm=no
# Its cache inside the project, and the lockfile with the packages' addresses, so that the jail's npm ci --offline
# installs from the cache alone.
if command -v npm >/dev/null && (cd "$work/npm" && npm install --cache ./cache --omit-lockfile-registry-resolved=false \
  --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then
  have_npm=yes
  (cd "$work/npm" && tar cf modules.tar node_modules && rm -rf node_modules)
  echo "node_modules: $(tar tf "$work/npm/modules.tar" | wc -l) entries"
fi

run() { # setting, project, command
  local start end
  start=$(date +%s%N)
  (cd "$2" && "$agentjail" run --policy "$work/$1.yaml" --audit-log "$work/audit-$1.jsonl" -- sh -c "$3" \
    >/dev/null 2>"$work/last.err") || { cat "$work/last.err" >&2; return 1; }
  end=$(date +%s%N)
  echo $(( (end - start) / 1000000 ))
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

# The loop alone, without the session around it: a C loop of 100,000 open(O_WRONLY|O_CREAT|O_TRUNC) + close over 100
# relative paths, timed inside the jail (it prints microseconds per iteration).
cat > "$work/burstc.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
int main(void) {
    char p[64];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < 100000; i++) {
        snprintf(p, sizeof p, "out/c%d", i % 100);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) return 1;
        close(fd);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.2f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / 100000);
    return 0;
}
C
have_cc=no
if command -v gcc >/dev/null && gcc -O2 -o "$work/c/burstc" "$work/burstc.c"; then
  have_cc=yes
fi
per_iteration() { # setting: the loop's microseconds per iteration, inside the jail
  (cd "$work/c" && mkdir -p out && "$agentjail" run --policy "$work/$1.yaml" --audit-log "$work/audit-$1.jsonl" \
    -- ./burstc 2>"$work/last.err") || { cat "$work/last.err" >&2; return 1; }
}

have_project=no
if [ -n "${C_PROJECT:-}" ]; then
  mkdir -p "$work/project"
  if [ -d "$C_PROJECT" ]; then
    cp -r "$C_PROJECT/." "$work/project/"
  else
    tar xf "$C_PROJECT" -C "$work/project" --no-same-owner
  fi
  # A tarball with one top directory: build in it.
  project=$work/project
  if [ "$(find "$project" -mindepth 1 -maxdepth 1 | wc -l)" = 1 ] && [ -d "$(find "$project" -mindepth 1 -maxdepth 1)" ]; then
    project=$(find "$project" -mindepth 1 -maxdepth 1)
  fi
  have_project=yes
fi

# A warm-up session first: the CLI jar and its class-data archive are made then, not in a measured run.
run off "$work/c" true >/dev/null

echo "workload round off_ms exec_ms files_ms exec/off files/off"
for r in $(seq 1 "$rounds"); do
  declare -A t=()
  # The settings take turns going first, so none always runs on the machine as the one before it left it.
  case $((r % 3)) in 1) order="off exec files" ;; 2) order="exec files off" ;; 0) order="files off exec" ;; esac
  for setting in $order; do
    t[$setting]=$(run "$setting" "$work/c" "make clean >/dev/null; make -j2 >/dev/null")
  done
  echo "make-j2 $r ${t[off]} ${t[exec]} ${t[files]} $(ratio "${t[exec]}" "${t[off]}") $(ratio "${t[files]}" "${t[off]}")"
  if [ "$have_project" = yes ]; then
    for setting in $order; do
      t[$setting]=$(run "$setting" "$project" \
        "${C_PROJECT_CLEAN:-make clean} >/dev/null 2>&1; ${C_PROJECT_BUILD:-make -j2} >/dev/null 2>&1")
    done
    echo "c-project $r ${t[off]} ${t[exec]} ${t[files]} $(ratio "${t[exec]}" "${t[off]}") $(ratio "${t[files]}" "${t[off]}")"
  fi
  # The issue's burst: 100,000 opens for writing in one loop (100 files, each truncated a thousand times).
  for setting in $order; do
    t[$setting]=$(run "$setting" "$work/c" \
      "python3 -c 'import os
for i in range(100000): os.close(os.open(\"out/b%d\" % (i % 100), os.O_WRONLY | os.O_CREAT | os.O_TRUNC))'")
  done
  echo "burst-100k $r ${t[off]} ${t[exec]} ${t[files]} $(ratio "${t[exec]}" "${t[off]}") $(ratio "${t[files]}" "${t[off]}")"
  if [ "$have_cc" = yes ]; then
    for setting in $order; do
      t[$setting]=$(per_iteration "$setting")
    done
    echo "loop-us/iter $r ${t[off]} ${t[exec]} ${t[files]} $(ratio "${t[exec]}" "${t[off]}") $(ratio "${t[files]}" "${t[off]}")"
  fi
  if [ "$have_npm" = yes ]; then
    for setting in $order; do
      t[$setting]=$(run "$setting" "$work/npm" \
        "rm -rf node_modules; tar xf modules.tar")
    done
    echo "node_modules $r ${t[off]} ${t[exec]} ${t[files]} $(ratio "${t[exec]}" "${t[off]}") $(ratio "${t[files]}" "${t[off]}")"
    # npm ci of the same project from its local cache (npm's update check is denied: the policy allows no network).
    for setting in $order; do
      t[$setting]=$(run "$setting" "$work/npm" \
        "rm -rf node_modules; npm ci --offline --cache ./cache --no-audit --no-fund --loglevel=error")
    done
    echo "npm-ci $r ${t[off]} ${t[exec]} ${t[files]} $(ratio "${t[exec]}" "${t[off]}") $(ratio "${t[files]}" "${t[off]}")"
  fi
done | tee "$work/rows"
for setting in exec files; do
  echo "records ($setting): $(grep -c '"kind":"exec"' "$work/audit-$setting.jsonl") exec, $(grep -c '"kind":"file"' "$work/audit-$setting.jsonl") file"
done
# The floor under the burst rows: the same loop under a supervisor that only answers (outside the jail, no agentjail).
if [ "$have_cc" = yes ] && gcc -O2 -o "$work/notif-floor" "$here/bench/notif-floor.c"; then
  for r in 1 2 3; do (cd "$work/c" && "$work/notif-floor" | sed 's/^/notif-floor: /'); done
fi
# Per workload, the median of the rounds' ratios: each ratio compares runs of the same minutes.
awk '{ e[$1] = e[$1] " " $6; f[$1] = f[$1] " " $7 }
  END { for (w in e) { printf "median %s exec/off %s files/off %s\n", w, median(e[w]), median(f[w]) } }
  function median(list,   n, a, i, j, x) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return n % 2 ? a[(n + 1) / 2] : sprintf("%.3f", (a[n / 2] + a[n / 2 + 1]) / 2)
  }' "$work/rows"
