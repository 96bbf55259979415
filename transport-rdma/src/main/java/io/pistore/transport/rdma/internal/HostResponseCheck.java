package io.pistore.transport.rdma.internal;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Operation;
import io.pistore.spi.Protection;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.SignatureMapping;
import java.nio.ByteBuffer;

/**
 * Turns the target's answer to a host request into the request's completion: on the integrity MR
 * path the MR's signature status decides (a PI error the NIC found replaces a success) and a READ's
 * data and metadata are copied out of any bounce buffers; on the software path a READ's data and
 * metadata are copied out of the slot's staging buffer and its PI is checked as the request's flags
 * ask. Invariant: a request never completes successfully with data whose PI a check it asked for
 * found bad, and the user's buffers are written only for a successful READ.
 */
final class HostResponseCheck {
    private HostResponseCheck() {
    }

    /** The completion of the request in {@code s}, answered {@code c}; called under the queue's lock. */
    static Completion check(HostSlot s, Completion c) {
        BlockRequest r = s.request;
        if (s.path == HostSlot.PATH_OFFLOAD) {
            IntegrityMr mr = s.mr;
            mr.checkStatus(s.status);
            if (c.isSuccess()) {
                Completion bad = SignatureMapping.toCompletion(s.status, mr.sigAttrs(), r.lba());
                if (bad != null) {
                    c = bad;
                }
            }
            if (c.isSuccess() && r.op() == Operation.READ) {
                if (s.bounceData != null) {
                    Buffers.scatter(s.bounceData.segment(0), 0, s.userData);
                }
                if (s.bounceMeta != null) {
                    Buffers.scatter(s.bounceMeta.segment(0), 0, s.userMeta);
                }
            }
        } else if (s.path == HostSlot.PATH_SOFTWARE && c.isSuccess() && r.isMetadataOnly()) {
            Buffers.scatter(s.staging.buffer(), 0, r.metadata()); // stored metadata, unchecked
        } else if (s.path == HostSlot.PATH_SOFTWARE && c.isSuccess() && r.op() == Operation.READ) {
            ByteBuffer b = s.staging.buffer();
            Buffers.scatter(b, 0, r.data());
            if (r.hasMetadata()) {
                Buffers.scatter(b, (int) r.data().length(), r.metadata());
                BlockFormat f = s.format;
                if (f != null && f.hasPi() && !r.protection().checks().isNone()) {
                    // The receiving hop checks what the flags ask (software PI).
                    Protection p = r.protection();
                    PiContext ctx = p.context(f);
                    PiError e = Pi.verify(ctx, r.data(), r.metadata(), r.blocks());
                    if (e != null) {
                        c = Completion.piErrorCaughtByHost(r.lba(), e);
                    }
                }
            }
        }
        return c;
    }
}
