#!/usr/bin/env bash
# Runs a JMH benchmark from a module's test classes with a JDK >= 21 (JMH's forks would otherwise
# start the machine's default java). Usage: bench/jmh.sh [-m MODULE] PATTERN [JMH options...]
# MODULE defaults to proxy (RedactionBenchmark, HandshakeBenchmark); certs has LeafCertificatesBenchmark, launcher
# ExecRecordBenchmark.
set -euo pipefail
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
module=proxy
if [[ ${1:-} == -m ]]; then module=$2; shift 2; fi
[[ $# -ge 1 ]] || { echo "usage: bench/jmh.sh [-m MODULE] PATTERN [JMH options...]" >&2; exit 2; }
java_home=${JAVA_HOME:-}
if [ -z "$java_home" ] || ! "$java_home/bin/java" -version 2>&1 | grep -qE 'version "(2[1-9]|[3-9][0-9])'; then
  for d in /usr/lib/jvm/*; do
    if [ -x "$d/bin/javac" ] && "$d/bin/java" -version 2>&1 | grep -qE 'version "(2[1-9]|[3-9][0-9])'; then java_home=$d; fi
  done
fi
java=$java_home/bin/java
cd "$here"
JAVA_HOME=$java_home mvn -q -B -pl "$module" -am install -DskipTests
cd "$module"
JAVA_HOME=$java_home mvn -q -B dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.classpath
exec "$java" -cp "target/test-classes:target/classes:$(cat target/bench.classpath)" org.openjdk.jmh.Main "$@" -jvm "$java"
