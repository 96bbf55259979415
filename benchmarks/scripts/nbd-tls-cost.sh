#!/usr/bin/env bash
# What TLS costs the NBD frontend: fio's nbd engine (libnbd) against `pistore serve --nbd` over a
# memory volume (4096+8, PI inserted inside), once with plaintext NBD and once with
# `--nbd-tls require` (nbds://, a throwaway CA and certificates made with openssl), alternating per
# round; fio warms up for 5 s first (the server's JIT compiles the JDK's TLS code meanwhile).
# Rows: 4 KiB random read and write at qd 32, 128 KiB sequential read and write at qd 8.
# Prints IOPS and the TLS/plaintext ratio of each row (medians).
#
#   benchmarks/scripts/nbd-tls-cost.sh [SECONDS] [ROUNDS]     (from anywhere; default 10 2)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
secs="${1:-10}"
rounds="${2:-2}"
work="$(mktemp -d)"
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
(
  cd "$work"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca-key.pem -out ca-cert.pem \
      -days 1 -subj "/CN=bench CA" -addext basicConstraints=critical,CA:TRUE \
      -addext keyUsage=critical,keyCertSign,cRLSign
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server-key.pem -out req.csr -subj /CN=localhost
  printf 'basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > ext
  openssl x509 -req -in req.csr -CA ca-cert.pem -CAkey ca-key.pem -CAcreateserial -out server-cert.pem -days 1 -extfile ext
) > /dev/null 2>&1
"$root/pistore" --version > /dev/null
port=10899
serve() { # MODE: starts serve, waits for its URI line
  local extra=()
  [ "$1" = tls ] && extra=(--tls-cert "$work/server-cert.pem" --tls-key "$work/server-key.pem")
  "$root/pistore" serve --memory-volume m:1GiB --nbd "127.0.0.1:$port" "${extra[@]}" > "$work/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do grep -q '/m ' "$work/serve.log" && return; sleep 0.1; done
  echo "serve did not start: $(cat "$work/serve.log")" >&2; exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""; }
run() { # MODE RW BS QD -> iops
  local uri="nbd://localhost:$port/m"
  # fio's nbd engine refuses URIs that name local files (tls-certificates=DIR), so here the client
  # does not check the server's certificate; the handshake and the cipher work are the same.
  [ "$1" = tls ] && uri="nbds://localhost:$port/m?tls-verify-peer=false"
  serve "$1"
  fio --name=tls --ioengine=nbd --uri="$uri" --rw="$2" --bs="$3" --iodepth="$4" --size=1G --time_based \
      --runtime="$secs" --ramp_time=5 --output-format=json 2>/dev/null \
    | python3 -c 'import json,sys; t = sys.stdin.read(); j = json.loads(t[t.index("{"):])["jobs"][0]; print("%.0f" % (j["read"]["iops"] + j["write"]["iops"]))'
  stop
}
echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
printf '%-22s %12s %12s %7s\n' row plain_iops tls_iops ratio
for row in "randread 4k 32" "randwrite 4k 32" "read 128k 8" "write 128k 8"; do
  set -- $row
  plain=(); tlsr=()
  for ((i = 0; i < rounds; i++)); do
    if ((i % 2 == 0)); then
      plain+=("$(run plain "$1" "$2" "$3")"); tlsr+=("$(run tls "$1" "$2" "$3")")
    else
      tlsr+=("$(run tls "$1" "$2" "$3")"); plain+=("$(run plain "$1" "$2" "$3")")
    fi
  done
  python3 - "$1 $2 qd $3" "${plain[*]}" "${tlsr[*]}" <<'PY'
import statistics, sys
name, p, t = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
ratios = [b / a for a, b in zip(p, t)]
print("%-22s %12.0f %12.0f %7.3f   (per round %s)" % (name, statistics.median(p), statistics.median(t),
      statistics.median(ratios), " ".join("%.3f" % r for r in ratios)))
PY
done
