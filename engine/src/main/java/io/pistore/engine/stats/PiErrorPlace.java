package io.pistore.engine.stats;

/** Where along the path a PI check failure was caught. */
public enum PiErrorPlace {
    /** By the transport, as a write's bytes arrived (the TCP target's stream check, an RDMA integrity MR). */
    WIRE("wire"),
    /** By the engine, checking a write before storing it: nothing was stored. */
    TARGET("target"),
    /** By the engine, reading a stored block whose PI does not match it: the block went bad at rest. */
    REST("rest"),
    /**
     * By the host, in the host's process: a read's PI checked as it arrived (the tcp and rdma hosts
     * check reads, and the request's PiDuty tells the target, which returns stored PI unchecked), or
     * by the application itself (bench in pass mode, whose reads ask no hop before it to check).
     * Counted by a process that is a host: bench, serve with --target.
     */
    HOST("host");

    private final String label;

    PiErrorPlace(String label) {
        this.label = label;
    }

    /** The word used in metric labels and tables. */
    public String label() {
        return label;
    }
}
