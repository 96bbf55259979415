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
root="$(cd "$(dirname "$0")/../.." && pwd)"
mib="${1:-512}"
rounds="${2:-3}"
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
  echo "alice:$(openssl rand -hex 32)" > keys.psk
  head -c "$((mib << 20))" /dev/urandom > image.raw
) > /dev/null 2>&1
"$root/pistore" --version > /dev/null
port=10898
serve() { # MODE: starts serve, waits for its URI line
  local extra=()
  [ "$1" = x509 ] && extra=(--tls-cert "$work/server-cert.pem" --tls-key "$work/server-key.pem")
  [ "$1" = psk ] && extra=(--tls-psk "$work/keys.psk")
  "$root/pistore" serve --memory-volume "m:${mib}MiB" --nbd "127.0.0.1:$port" "${extra[@]}" > "$work/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do grep -q '/m ' "$work/serve.log" && return; sleep 0.1; done
  echo "serve did not start: $(cat "$work/serve.log")" >&2; exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""; }
uri() { # MODE
  case "$1" in
    plain) echo "nbd://localhost:$port/m" ;;
    x509) echo "nbds://localhost:$port/m?tls-certificates=$work" ;;
    psk) echo "nbds://alice@localhost:$port/m?tls-psk-file=$work/keys.psk" ;;
  esac
}
copy() { # ROW MODE: one nbdcopy; --no-extents so that the zeroes of a fresh volume are read, not skipped
  if [ "$1" = read ]; then nbdcopy --no-extents "$(uri "$2")" null:; else nbdcopy "$work/image.raw" "$(uri "$2")"; fi
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
