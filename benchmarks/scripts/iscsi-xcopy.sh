#!/usr/bin/env bash
# EXTENDED COPY against a host's copy on one iSCSI unit (docs/ISCSI.md#speed): builds iscsi_xcopy.c,
# serves a fresh 1 GiB 512+8 volume under WORK_DIR (default /dev/shm/pistore-xcopy) over iSCSI, and
# runs ROUNDS rounds (default 3) copying MIB MiB (default 256) each way, checked against the source.
#   benchmarks/scripts/iscsi-xcopy.sh [ROUNDS [MIB]]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
mib=${2:-256}
work=${WORK_DIR:-/dev/shm/pistore-xcopy}
port=${PORT:-3299}
bin=$(mktemp -d)
trap 'kill "$serve" 2>/dev/null || true; wait "$serve" 2>/dev/null || true; rm -rf "$work" "$bin"' EXIT
gcc -O2 -Wall -o "$bin/iscsi_xcopy" benchmarks/scripts/iscsi_xcopy.c -liscsi
rm -rf "$work"
./pistore volume create --data "$work" v --size 1GiB --format 512+8 >/dev/null
./pistore serve --data "$work" --iscsi "127.0.0.1:$port" > "$bin/serve.log" 2>&1 &
serve=$!
for _ in $(seq 100); do iscsi-ls "iscsi://127.0.0.1:$port" >/dev/null 2>&1 && break; sleep 0.2; done
for r in $(seq "$rounds"); do
  echo "round $r"
  "$bin/iscsi_xcopy" "iscsi://127.0.0.1:$port/iqn.2026-12.io.pistore:v/0" "$mib"
done
