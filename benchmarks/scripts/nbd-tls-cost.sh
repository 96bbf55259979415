#!/usr/bin/env bash
# What TLS costs the NBD frontend: fio's nbd engine (libnbd) against `pistore serve --nbd` over a
# memory volume (4096+8, PI inserted inside), with plaintext NBD and with `--nbd-tls require`
# (nbds://, a throwaway CA and certificates made with openssl) on each TLS engine named in
# TLS_ENGINES (default "openssl jdk": `--tls-engine`), side by side in the same rounds, the order
# reversed every other round so drift on a shared machine falls on all; fio warms up for 5 s first
# (the server's JIT compiles the TLS code meanwhile). Rows: 4 KiB random read and write at qd 32,
# 128 KiB sequential read and write at qd 8 (ROWS="RW BS QD,..." picks others).
# Prints, per mode, the median IOPS and the server's CPU per request (its user + system time over
# fio's whole run, warm-up included, over the requests of that run at the measured rate), and the
# TLS/plaintext ratio of IOPS per engine (per round in brackets).
#
#   benchmarks/scripts/nbd-tls-cost.sh [SECONDS] [ROUNDS]     (from anywhere; default 10 2)
set -euo pipefail
secs="${1:-10}"
rounds="${2:-2}"
ramp=5
NBD_PORT=10899
NBD_VOLUME=1GiB
. "$(dirname "$0")/nbd-tls-common.sh"
hz="$(getconf CLK_TCK)"
run() { # MODE RW BS QD -> "iops cpu_us_per_op"
  local uri before after iops mode=x509
  [ "$1" = plain ] && mode=plain
  uri="$(nbd_uri plain)"
  # fio's nbd engine refuses URIs that name local files (tls-certificates=DIR), so here the client
  # does not check the server's certificate; the handshake and the cipher work are the same.
  [ "$mode" = x509 ] && uri="nbds://localhost:$NBD_PORT/m?tls-verify-peer=false"
  NBD_TLS_ENGINE="$([ "$mode" = x509 ] && echo "$1" || true)" serve "$mode"
  before="$(cpu_ticks)"
  iops="$(fio --name=tls --ioengine=nbd --uri="$uri" --rw="$2" --bs="$3" --iodepth="$4" --size=1G --time_based \
      --runtime="$secs" --ramp_time="$ramp" --output-format=json 2>/dev/null \
    | python3 -c 'import json,sys; t = sys.stdin.read(); j = json.loads(t[t.index("{"):])["jobs"][0]; print("%.0f" % (j["read"]["iops"] + j["write"]["iops"]))')"
  after="$(cpu_ticks)"
  stop
  python3 -c "import sys; i, t = float('$iops'), ($after - $before) / $hz; print('%.0f %.2f' % (i, t * 1e6 / (i * ($secs + $ramp)) if i else 0))"
}
echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), aes: $(grep -m1 -ow aes /proc/cpuinfo || echo no)"
modes="plain ${TLS_ENGINES:-openssl jdk}"
echo "columns: median IOPS and server CPU us per request of each mode; TLS/plaintext ratio of IOPS (per round in brackets)"
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
    modes[m] = (v[0::2], v[1::2])
p = modes["plain"]
line = "%-18s plain %8.0f IOPS %6.1f us" % (name, med(p[0]), med(p[1]))
for m, (iops, cpu) in modes.items():
    if m == "plain":
        continue
    ratios = [b / a for a, b in zip(p[0], iops)]
    line += " | %s %8.0f IOPS %6.1f us ratio %.3f (%s)" % (m, med(iops), med(cpu), med(ratios),
            " ".join("%.2f" % r for r in ratios))
print(line)
PY
done
