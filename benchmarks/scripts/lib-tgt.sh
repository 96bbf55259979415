# Sourced by the scripts that measure pistore's iSCSI frontend against tgt (iscsi-vs-tgt.sh,
# iscsi-vs-tgt-cpu.sh). Needs root (tgtd) and the Debian package tgt.

# Starts tgtd on 127.0.0.1:PORT with control port CTL, serving a sparse file WORK/tgt.img of
# SIZE_MIB MiB with its default rdwr store as LUN 1 of iqn.2026-12.org.example:tgt, open to every
# initiator; sets tgt_pid (and adds it to the array pids) and tgt_url.
tgt_up() { # WORK PORT CTL SIZE_MIB
    truncate -s "${4}M" "$1/tgt.img"
    tgtd -f -C "$3" --iscsi "portal=127.0.0.1:$2" > "$1/tgtd.log" 2>&1 &
    tgt_pid=$!
    pids+=("$tgt_pid")
    for _ in $(seq 300); do
        tgtadm -C "$3" --op show --mode system > /dev/null 2>&1 && break
        sleep 0.2
    done
    tgtadm -C "$3" --lld iscsi --op new --mode target --tid 1 -T iqn.2026-12.org.example:tgt
    tgtadm -C "$3" --lld iscsi --op new --mode logicalunit --tid 1 --lun 1 -b "$1/tgt.img"
    tgtadm -C "$3" --lld iscsi --op bind --mode target --tid 1 -I ALL
    tgt_url="iscsi://127.0.0.1:$2/iqn.2026-12.org.example:tgt/1"
}

# Ends the tgtd of control port CTL: it ignores SIGTERM while it has targets, so the target goes
# first, then the system, which ends it.
tgt_down() { # CTL
    tgtadm -C "$1" --lld iscsi --op delete --mode target --tid 1 --force > /dev/null 2>&1 || true
    tgtadm -C "$1" --op delete --mode system > /dev/null 2>&1 || true
}

# For `trap tgt_cleanup EXIT`: the tgtd of control port $ctl ended, the processes in the array pids
# stopped and waited for, $work removed unless the caller named it (WORK_DIR).
tgt_cleanup() {
    tgt_down "$ctl"
    for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
    [ -n "${WORK_DIR:-}" ] || rm -rf "$work"
}
