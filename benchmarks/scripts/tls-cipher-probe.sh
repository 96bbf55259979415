#!/usr/bin/env bash
# The CPU cost of the JDK's AES-GCM and of SSLEngine wrap/unwrap on 16 KiB records, one thread,
# measured in thread CPU time (docs/BENCHMARKS.md, "TLS on the tcp transport").
#   benchmarks/scripts/tls-cipher-probe.sh [SECONDS] [extra JVM options, e.g. -XX:-UseAESIntrinsics]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
seconds=${1:-2}
shift || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
keytool -genkeypair -keystore "$work/probe.p12" -storetype PKCS12 -storepass probe1 -keypass probe1 \
    -alias probe -keyalg EC -groupname secp256r1 -dname CN=localhost -ext SAN=dns:localhost \
    -validity 2 >/dev/null 2>&1
java -XX:+UnlockDiagnosticVMOptions "$@" "$here/TlsCipherProbe.java" "$work/probe.p12" "$seconds"
