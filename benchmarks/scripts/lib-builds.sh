# Sourced by the scripts that run builds side by side (two-builds.sh, iscsi-two-builds.sh).

# The class path of the package build under repository root DIR: the app jar and its libraries, and
# every transport's jar and libraries (the engine finds transports on the class path).
classpath() { # DIR
    local cp j
    cp="$(ls "$1"/app/target/pistore-app-*.jar | head -n 1):$1/app/target/lib/*"
    for j in "$1"/transport-*/target/pistore-transport-*.jar; do
        case "$j" in *-tests.jar | *-sources.jar) ;; *) cp="$cp:$j" ;; esac
    done
    for j in "$1"/transport-*/target/lib; do [ -d "$j" ] && cp="$cp:$j/*"; done
    echo "$cp"
}

# For `trap stop_at_exit EXIT`: the processes in the array pids stopped and waited for, the
# directory $work (if set) removed.
pids=()
stop_at_exit() {
    for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
    if [ -n "${work:-}" ]; then rm -rf "$work"; fi
}
