package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.SigErrorType;

/** Where the signature engine reports a failed check: an integrity MR keeps the first one of a registration. */
interface SigLatch {
    void latch(SigErrorType type, long expected, long actual, long wireOffset);
}
