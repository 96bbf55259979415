# Sourced by nbd-tls-cost.sh and nbd-psk-cost.sh: a work directory removed on exit, a throwaway CA
# with a server certificate (openssl) and a pre-shared key file in it, and `pistore serve --nbd`
# over one memory volume "m" (4096+8, PI inserted inside) started per run in one of three modes.
#
#   NBD_PORT and NBD_VOLUME must be set before sourcing; then:
#   serve plain|x509|psk    starts the server, returns once it prints its URI line (x509 on the TLS
#                           engine NBD_TLS_ENGINE names, openssl or jdk, when it is set)
#   cpu_ticks               the server's CPU so far (user + system), in clock ticks
#   stop                    stops it
#   nbd_uri plain|x509|psk  the libnbd URI of the volume (x509: checks the server certificate)
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
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
) > /dev/null 2>&1
"$root/pistore" --version > /dev/null

serve() { # MODE
  local extra=()
  [ "$1" = x509 ] && extra=(--tls-cert "$work/server-cert.pem" --tls-key "$work/server-key.pem")
  [ "$1" = x509 ] && [ -n "${NBD_TLS_ENGINE:-}" ] && extra+=(--tls-engine "$NBD_TLS_ENGINE")
  [ "$1" = psk ] && extra=(--tls-psk "$work/keys.psk")
  "$root/pistore" serve --memory-volume "m:$NBD_VOLUME" --nbd "127.0.0.1:$NBD_PORT" "${extra[@]}" > "$work/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do grep -q '/m ' "$work/serve.log" && return; sleep 0.1; done
  echo "serve did not start: $(cat "$work/serve.log")" >&2; exit 1
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }

stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""; }

nbd_uri() { # MODE
  case "$1" in
    plain) echo "nbd://localhost:$NBD_PORT/m" ;;
    x509) echo "nbds://localhost:$NBD_PORT/m?tls-certificates=$work" ;;
    psk) echo "nbds://alice@localhost:$NBD_PORT/m?tls-psk-file=$work/keys.psk" ;;
  esac
}
