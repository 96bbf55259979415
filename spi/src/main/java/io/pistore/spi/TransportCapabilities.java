package io.pistore.spi;

import io.pistore.integrity.GuardType;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * What a transport can do, as the application reads it: which guards it checks in hardware
 * ({@code serve} says so at start) and its largest transfer (the NBD frontend's limit over it).
 */
public final class TransportCapabilities {
    /**
     * The largest transfer (data plus metadata bytes of one request) of the engine and of every
     * transport by default: 8 MiB. The one place this limit is written; a transport may declare less.
     */
    public static final int MAX_TRANSFER_BYTES = 8 << 20;

    private final Set<GuardType> hardwareGuards;
    private final int maxTransferBytes;

    public TransportCapabilities(Set<GuardType> hardwareGuards, int maxTransferBytes) {
        if (maxTransferBytes <= 0) {
            throw new IllegalArgumentException("the transfer limit must be positive, not " + maxTransferBytes);
        }
        this.hardwareGuards = hardwareGuards.isEmpty()
                ? Collections.emptySet() : Collections.unmodifiableSet(EnumSet.copyOf(hardwareGuards));
        this.maxTransferBytes = maxTransferBytes;
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

    @Override
    public String toString() {
        return "hardwareGuards=" + hardwareGuards + " maxTransfer=" + maxTransferBytes;
    }
}
