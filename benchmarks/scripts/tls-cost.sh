#!/usr/bin/env bash
# What TLS 1.3 costs the tcp transport: `pistore bench --transport tcp` (embedded target, memory
# volume, PI insert, one queue) plaintext and with mutual TLS (tcp.tls=true, a throwaway CA and one
# certificate for both ends, made with openssl), alternating plain/TLS/TLS/plain per round so drift
# on a shared machine falls on both. Rows: 4 KiB random read and write at qd 32, 128 KiB sequential
# read and write at qd 8. Prints IOPS, MiB/s and the TLS/plaintext ratio of each row (medians).
#
# Each run warms up for RAMP seconds first: the JIT takes several seconds to compile the JDK's TLS
# code, so short runs understate TLS far more than they understate plaintext.
#
#   benchmarks/scripts/tls-cost.sh [SECONDS] [ROUNDS] [RAMP]     (from anywhere; default 5 2 5)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
secs="${1:-5}"
rounds="${2:-2}"
ramp="${3:-5}"
pki="$(mktemp -d)"
trap 'rm -rf "$pki"' EXIT
(
  cd "$pki"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca-key.pem -out ca-cert.pem \
      -days 1 -subj "/CN=bench CA" -addext basicConstraints=critical,CA:TRUE \
      -addext keyUsage=critical,keyCertSign,cRLSign
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout key.pem -out req.csr -subj /CN=localhost
  printf 'basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' > ext
  openssl x509 -req -in req.csr -CA ca-cert.pem -CAkey ca-key.pem -CAcreateserial -out cert.pem -days 1 -extfile ext
) > /dev/null 2>&1
tls=(--transport-option tcp.tls=true --transport-option "tcp.tlsCert=$pki/cert.pem"
     --transport-option "tcp.tlsKey=$pki/key.pem" --transport-option "tcp.tlsCa=$pki/ca-cert.pem"
     --transport-option tcp.tlsVerifyClient=true)
"$root/pistore" --version > /dev/null
echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), aes: $(grep -m1 -ow aes /proc/cpuinfo || echo no)"
run() { # MODE RW BS QD -> "iops mibps"
  local extra=()
  [ "$1" = tls ] && extra=("${tls[@]}")
  "$root/pistore" bench --transport tcp --rw "$2" --bs "$3" --qd "$4" --pi insert --seconds "$secs" --ramp "$ramp" \
      --size 256MiB --json "${extra[@]}" 2>/dev/null \
    | python3 -c 'import json,sys; r = json.loads(sys.stdin.read()); print("%.0f %.1f" % (r["iops"], r["mib_per_s"]))'
}
printf '%-22s %12s %12s %11s %11s %7s\n' row plain_iops tls_iops plain_MiB/s tls_MiB/s ratio
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
name, p, t = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
pi, pm = [float(x) for x in p[0::2]], [float(x) for x in p[1::2]]
ti, tm = [float(x) for x in t[0::2]], [float(x) for x in t[1::2]]
ratios = [b / a for a, b in zip(pi, ti)]
print("%-22s %12.0f %12.0f %11.1f %11.1f %7.3f   (per round %s)" % (name, statistics.median(pi), statistics.median(ti),
      statistics.median(pm), statistics.median(tm), statistics.median(ratios), " ".join("%.3f" % r for r in ratios)))
PY
done
