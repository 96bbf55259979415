# Sourced by the scripts that measure a 3-peer replicated volume on loopback (replicated-serve-cpu.sh,
# replicated-threads.sh, replicated-vs-tcp.sh). Expects cp (the class path of the peers' build), data
# (a directory of its own) and a `pistore` function (the CLI, for create and status). peers_start uses
# ports 5441-5443 (tcp) and 9981-9983 (replication): one such script at a time; a script that starts
# its peers itself sets peers first and uses the rest.

peers=${peers:-n1=127.0.0.1:9981,n2=127.0.0.1:9982,n3=127.0.0.1:9983}
pids=()

# For `trap peers_cleanup EXIT`: the peers stopped and waited for, $data removed.
peers_cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
    rm -rf "$data"
}

# A 256 MiB replicated volume rv on three fresh peers (JVM options SERVE_OPTS, serve arguments
# SERVE_ARGS), each one's log in $data/serveN.log; sets leader (1-3) once one leads, or exits.
peers_start() {
    local i
    for i in 1 2 3; do
        mkdir -p "$data/d$i"
        pistore volume create rv --size 256MiB --format 4096+8 --data "$data/d$i" --replica-id n$i --replicas $peers > /dev/null 2>&1
    done
    for i in 1 2 3; do
        java ${SERVE_OPTS:-} -cp "$cp" io.pistore.app.cli.Main serve --transport tcp --data "$data/d$i" --listen 127.0.0.1:544$i \
            --replica-id n$i --replica-listen 127.0.0.1:998$i ${SERVE_ARGS:-} > "$data/serve$i.log" 2>&1 &
        pids+=($!)
    done
    sleep 5
    peers_await_leader || { echo "no leader" >&2; exit 1; }
}

# Sets leader (1-3) to the peer of $peers that leads rv's group, asking for up to 30 s; fails without one.
peers_await_leader() {
    leader=""
    for _ in $(seq 30); do
        leader=$(pistore replicas status rv --replicas $peers 2> /dev/null | sed -n 's/^volume rv: leader n\([123]\),.*/\1/p' || true)
        [ -n "$leader" ] && return 0
        sleep 1
    done
    return 1
}
