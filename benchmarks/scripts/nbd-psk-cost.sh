#!/usr/bin/env bash
# What each NBD TLS setup costs in bulk transfers: nbdcopy (libnbd, 4 connections, 256 KiB requests)
# against `pistore serve --nbd` over a memory volume (4096+8, PI inserted inside), with plaintext NBD,
# with X.509 TLS (the JDK's TLS) and with pre-shared keys (Bouncy Castle's TLS, --tls-psk), a fresh
# server per run, the three in turn and the order reversed every other round. One untimed copy warms
# each server's JIT first. Rows: reading the volume (to null:) and writing it (from a random file).
# Prints MiB/s per setup and the ratios psk/plain, x509/plain and psk/x509 (medians of the rounds).
#
#   benchmarks/scripts/nbd-psk-cost.sh [MIB] [ROUNDS]     (from anywhere; default 512 3)
set -euo pipefail
mib="${1:-512}"
rounds="${2:-3}"
NBD_PORT=10898
NBD_VOLUME="${mib}MiB"
. "$(dirname "$0")/nbd-tls-common.sh"
head -c "$((mib << 20))" /dev/urandom > "$work/image.raw"
copy() { # ROW MODE: one nbdcopy; --no-extents so that the zeroes of a fresh volume are read, not skipped
  if [ "$1" = read ]; then nbdcopy --no-extents "$(nbd_uri "$2")" null:; else nbdcopy "$work/image.raw" "$(nbd_uri "$2")"; fi
}
run() { # ROW MODE -> MiB/s
  serve "$2"
  copy "$1" "$2" # warm-up
  local t0 t1
  t0=$(date +%s.%N); copy "$1" "$2"; t1=$(date +%s.%N)
  stop
  python3 -c "print('%.1f' % ($mib / ($t1 - $t0)))"
}
echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $mib MiB per copy"
printf '%-6s %10s %10s %10s %9s %9s %9s\n' row plain x509 psk psk/plain x509/plain psk/x509
for row in read write; do
  plain=(); x509=(); psk=()
  for ((i = 0; i < rounds; i++)); do
    if ((i % 2 == 0)); then order="plain x509 psk"; else order="psk x509 plain"; fi
    for m in $order; do
      v="$(run "$row" "$m")"
      case "$m" in plain) plain+=("$v") ;; x509) x509+=("$v") ;; psk) psk+=("$v") ;; esac
    done
  done
  python3 - "$row" "${plain[*]}" "${x509[*]}" "${psk[*]}" <<'PY'
import statistics, sys
row = sys.argv[1]
p, x, k = ([float(v) for v in a.split()] for a in sys.argv[2:5])
med = statistics.median
kp = [b / a for a, b in zip(p, k)]
xp = [b / a for a, b in zip(p, x)]
kx = [b / a for a, b in zip(x, k)]
print("%-6s %10.1f %10.1f %10.1f %9.3f %9.3f %9.3f" % (row, med(p), med(x), med(k), med(kp), med(xp), med(kx)))
print("       per round MiB/s: plain %s | x509 %s | psk %s" % (p, x, k))
print("       per round psk/plain %s, x509/plain %s, psk/x509 %s" % (
    " ".join("%.3f" % r for r in kp), " ".join("%.3f" % r for r in xp), " ".join("%.3f" % r for r in kx)))
PY
done
