package io.pistore.frontend.iscsi;

import java.util.Set;

/** Aborts the tasks of I_T nexuses that a PREEMPT AND ABORT preempted, on the sessions of one port. */
interface ScsiTaskAborts {
    /**
     * Aborts the tasks on {@code lun} of the sessions of {@code nexuses} whose commands had arrived by
     * {@code receivedBy} (a {@link System#nanoTime} reading; later ones are not the PREEMPT's to
     * abort); with {@code wait}, returns once they have left.
     */
    void abort(ScsiLun lun, Set<String> nexuses, long receivedBy, boolean wait);
}
