package io.pistore.transport.rdma.verbs.disni;

/** {@code enum rdma_cm_event_type}, in librdmacm's order (the ordinal is the C value, as DiSNI's EventType). */
enum CmEventType {
    ADDR_RESOLVED, ADDR_ERROR, ROUTE_RESOLVED, ROUTE_ERROR, CONNECT_REQUEST, CONNECT_RESPONSE, CONNECT_ERROR,
    UNREACHABLE, REJECTED, ESTABLISHED, DISCONNECTED, DEVICE_REMOVAL, MULTICAST_JOIN, MULTICAST_ERROR,
    ADDR_CHANGE, TIMEWAIT_EXIT, UNKNOWN;

    private static final CmEventType[] VALUES = values();

    static CmEventType of(int v) {
        return v >= 0 && v < VALUES.length - 1 ? VALUES[v] : UNKNOWN;
    }

    /** The events that end an active connect attempt with a failure. */
    boolean failsConnect() {
        switch (this) {
            case ADDR_ERROR: case ROUTE_ERROR: case CONNECT_ERROR: case UNREACHABLE: case REJECTED:
            case DISCONNECTED: case DEVICE_REMOVAL:
                return true;
            default:
                return false;
        }
    }
}
