#!/usr/bin/env bash
# What TLS 1.3 costs the tcp transport: `pistore bench --transport tcp` (embedded target, memory
# volume, PI insert, one queue) plaintext and with mutual TLS (tcp.tls=true, a throwaway CA and one
# certificate for both ends, made with openssl) on each TLS engine named in TLS_ENGINES (default
# "openssl jdk": tcp.tlsEngine; "psk": a pre-shared key instead of certificates, tcp.tlsPsk), side by side in the same rounds, the order reversed every other
# round so drift on a shared machine falls on all. Rows: 4 KiB random read and write at qd 32,
# 128 KiB sequential read and write at qd 8 (ROWS="RW BS QD,..." picks others). Prints the IOPS, MiB/s and CPU per
# request (the bench's own count: both ends of the connection are in its process) of each mode
# (medians) and the TLS/plaintext ratio of IOPS per row and engine. With TLS_B_OPTS set, every round
# also runs TLS on the first engine with those JVM options added (a column "tlsb"), side by side in
# the same rounds: e.g. -XX:-UseAESIntrinsics, or -Xbootclasspath/a:DIR holding another build of
# TlsChannel and TlsStream.
#
# Each run warms up for RAMP seconds first: the JIT takes several seconds to compile the TLS code
# (the JDK's record layer most), so short runs understate TLS far more than they understate plaintext.
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
  echo "bench:$(openssl rand -hex 32)" > bench.psk && chmod 600 bench.psk
) > /dev/null 2>&1
tls=(--transport-option tcp.tls=true --transport-option "tcp.tlsCert=$pki/cert.pem"
     --transport-option "tcp.tlsKey=$pki/key.pem" --transport-option "tcp.tlsCa=$pki/ca-cert.pem"
     --transport-option tcp.tlsVerifyClient=true)
"$root/pistore" --version > /dev/null
echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), aes: $(grep -m1 -ow aes /proc/cpuinfo || echo no)"
engines=(${TLS_ENGINES:-openssl jdk})
run() { # MODE RW BS QD -> "iops mibps cpu_us_per_op"; MODE: plain, an engine, or tlsb
  local extra=() opts="${JAVA_OPTS:-}"
  case "$1" in
    plain) ;;
    psk) extra=(--transport-option tcp.tls=true --transport-option "tcp.tlsPsk=$pki/bench.psk") ;;
    tlsb) extra=("${tls[@]}" --transport-option "tcp.tlsEngine=${engines[0]}"); opts="$opts $TLS_B_OPTS" ;;
    *) extra=("${tls[@]}" --transport-option "tcp.tlsEngine=$1") ;;
  esac
  JAVA_OPTS="$opts" "$root/pistore" bench --transport tcp --rw "$2" --bs "$3" --qd "$4" --pi insert --seconds "$secs" \
      --ramp "$ramp" --size 256MiB --json "${extra[@]}" 2>/dev/null \
    | python3 -c 'import json,sys; r = json.loads(sys.stdin.read()); print("%.0f %.1f %.2f" % (r["iops"], r["mib_per_s"], r["cpu"]["us_per_op"]))'
}
modes="plain ${engines[*]}"
[ -n "${TLS_B_OPTS:-}" ] && modes="$modes tlsb" && echo "tlsb: TLS (${engines[0]}) with JVM options $TLS_B_OPTS"
echo "columns: median IOPS, MiB/s and CPU us per request of each mode; TLS/plaintext ratio of IOPS (per round in brackets)"
IFS=, read -ra rows <<< "${ROWS:-randread 4k 32,randwrite 4k 32,read 128k 8,write 128k 8}"
for row in "${rows[@]}"; do
  set -- $row
  declare -A res=()
  for ((i = 0; i < rounds; i++)); do
    order="$modes"
    ((i % 2 == 1)) && order="$(echo "$modes" | tr ' ' '\n' | tac | tr '\n' ' ')"
    for m in $order; do res[$m]="${res[$m]:-} $(run "$m" "$1" "$2" "$3")"; done
  done
  args=()
  for m in $modes; do args+=("$m:${res[$m]}"); done
  unset res
  python3 - "$1 $2 qd $3" "${args[@]}" <<'PY'
import statistics, sys
med = statistics.median
name, modes = sys.argv[1], {}
for a in sys.argv[2:]:
    m, v = a.split(":", 1)
    v = [float(x) for x in v.split()]
    modes[m] = (v[0::3], v[1::3], v[2::3])
p = modes["plain"]
line = "%-18s plain %8.0f IOPS %7.1f MiB/s %7.1f us" % (name, med(p[0]), med(p[1]), med(p[2]))
for m, (iops, mib, cpu) in modes.items():
    if m == "plain":
        continue
    ratios = [b / a for a, b in zip(p[0], iops)]
    line += " | %s %8.0f IOPS %7.1f MiB/s %7.1f us ratio %.3f (%s)" % (m, med(iops), med(mib), med(cpu), med(ratios),
            " ".join("%.2f" % r for r in ratios))
print(line)
PY
done
