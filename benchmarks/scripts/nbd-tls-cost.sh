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
secs="${1:-10}"
rounds="${2:-2}"
NBD_PORT=10899
NBD_VOLUME=1GiB
. "$(dirname "$0")/nbd-tls-common.sh"
run() { # MODE RW BS QD -> iops
  local uri
  uri="$(nbd_uri plain)"
  # fio's nbd engine refuses URIs that name local files (tls-certificates=DIR), so here the client
  # does not check the server's certificate; the handshake and the cipher work are the same.
  [ "$1" = x509 ] && uri="nbds://localhost:$NBD_PORT/m?tls-verify-peer=false"
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
      plain+=("$(run plain "$1" "$2" "$3")"); tlsr+=("$(run x509 "$1" "$2" "$3")")
    else
      tlsr+=("$(run x509 "$1" "$2" "$3")"); plain+=("$(run plain "$1" "$2" "$3")")
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
