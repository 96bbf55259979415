package io.pistore.spi;

import io.pistore.integrity.GuardType;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/** What a transport can do: which guards it checks in hardware, and its transfer limits. */
public final class TransportCapabilities {
    /**
     * The largest transfer (data plus metadata bytes of one request) of the engine and of every
     * transport by default: 8 MiB. The one place this limit is written; a transport may declare less.
     */
    public static final int MAX_TRANSFER_BYTES = 8 << 20;

    private final Set<GuardType> hardwareGuards;
    private final int maxTransferBytes;
    private final int maxSegments;
    private final boolean separateMetadata;

    public TransportCapabilities(Set<GuardType> hardwareGuards, int maxTransferBytes, int maxSegments,
                                 boolean separateMetadata) {
        if (maxTransferBytes <= 0 || maxSegments <= 0) {
            throw new IllegalArgumentException("transfer limits must be positive");
        }
        this.hardwareGuards = hardwareGuards.isEmpty()
                ? Collections.emptySet() : Collections.unmodifiableSet(EnumSet.copyOf(hardwareGuards));
        this.maxTransferBytes = maxTransferBytes;
        this.maxSegments = maxSegments;
        this.separateMetadata = separateMetadata;
    }

    /** Guards whose PI the transport checks in hardware (an RDMA HCA: 8-byte tuples only); empty for software. */
    public Set<GuardType> hardwareGuards() {
        return hardwareGuards;
    }

    public boolean checksInHardware(GuardType g) {
        return hardwareGuards.contains(g);
    }

    /** Largest data + metadata bytes of one request. */
    public int maxTransferBytes() {
        return maxTransferBytes;
    }

    /** Most scatter-list segments (data plus metadata) of one request. */
    public int maxSegments() {
        return maxSegments;
    }

    /** Whether the transport carries a separate metadata scatter list (DIX) end to end. */
    public boolean separateMetadata() {
        return separateMetadata;
    }

    @Override
    public String toString() {
        return "hardwareGuards=" + hardwareGuards + " maxTransfer=" + maxTransferBytes + " maxSegments=" + maxSegments
                + " separateMetadata=" + separateMetadata;
    }
}
