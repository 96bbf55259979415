#!/usr/bin/env bash
# The CPU of one direction of TlsChannel per KiB, writer and reader threads apart, against the
# bare socket (docs/BENCHMARKS.md, "TLS on the tcp transport"), in thread CPU time. Runs plain,
# TlsChannel as built on each TLS engine of TLS_ENGINES (default "openssl jdk"), and, when
# OLD_TLS_CLASSES names a directory holding another build of io/pistore/security/tls/TlsChannel*.class
# and TlsStream*.class, that build on the first engine, ROUNDS times in turn.
#   benchmarks/scripts/tls-path-probe.sh [MIB] [ROUNDS]      (default 1024 2; builds with ./pistore)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mib=${1:-1024}
rounds=${2:-2}
"$root/pistore" --version > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
    -days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 > /dev/null 2>&1
cp="$root/app/target/lib/*"
for ((i = 0; i < rounds; i++)); do
  java -cp "$cp" "$here/TlsPathProbe.java" plain "$work/cert.pem" "$work/key.pem" "$mib"
  for e in ${TLS_ENGINES:-openssl jdk}; do
    echo -n "new   "; java -cp "$cp" "$here/TlsPathProbe.java" "$e" "$work/cert.pem" "$work/key.pem" "$mib"
  done
  if [ -n "${OLD_TLS_CLASSES:-}" ]; then
    e=$(echo ${TLS_ENGINES:-openssl jdk} | cut -d' ' -f1)
    echo -n "old   "; java "-Xbootclasspath/a:$OLD_TLS_CLASSES" -cp "$cp" "$here/TlsPathProbe.java" "$e" "$work/cert.pem" "$work/key.pem" "$mib"
  fi
done
