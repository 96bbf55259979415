package io.pistore.spi;

import io.pistore.integrity.PiErrorKind;

/** The outcome of a request. */
public enum Status {
    SUCCESS,
    /** The LBA range runs past the end of the volume. */
    LBA_OUT_OF_RANGE,
    /** A field of the request is invalid (block count, buffer sizes, flags). */
    INVALID_FIELD,
    /** No volume of that name. */
    NO_SUCH_VOLUME,
    /** End-to-end guard check error. */
    GUARD_CHECK,
    /** End-to-end application tag check error. */
    APP_TAG_CHECK,
    /** End-to-end reference tag check error. */
    REF_TAG_CHECK,
    /** The queue had no free slot (backpressure): retry after a completion. */
    QUEUE_FULL,
    /** The connection failed or was closed before the request completed. */
    TRANSPORT_ERROR,
    /** The target failed while executing (e.g. a media I/O error). */
    MEDIA_ERROR,
    INTERNAL_ERROR,
    /**
     * The target's access rules let this host only read the volume: a write, zero write or
     * deallocation is refused, nothing is written.
     */
    ACCESS_DENIED,
    /**
     * A write, zero write or deallocation sent on a connection its host has since replaced: the host
     * sent it again on a newer one, whose copy counts ({@link WriteFence}); nothing was written. A
     * host queue sends it again on its current connection.
     */
    FENCED,
    /**
     * The target's storage had no room for the write (its file system is full): as after a media
     * error the blocks may read old or new (the volume's journal may hold it), and a write may
     * succeed once room is made (as ENOSPC: NBD's error, SCSI's SPACE ALLOCATION FAILED WRITE
     * PROTECT). After the others, so the ordinals above keep their numbers.
     */
    NO_SPACE,
    /**
     * A write checked against a version of the volume's shared state ({@link WriteFence#view},
     * {@link SharedVolumeState}) that has since changed: nothing was written. Its sender checks it
     * again against the newer value, then sends it again or refuses it. Last, so the ordinals above
     * keep their numbers.
     */
    VIEW_CHANGED;

    public boolean isPiError() {
        return this == GUARD_CHECK || this == APP_TAG_CHECK || this == REF_TAG_CHECK;
    }

    /** The status a PI check failure of this kind earns; the one mapping from kinds to statuses. */
    public static Status of(PiErrorKind kind) {
        switch (kind) {
            case GUARD: return GUARD_CHECK;
            case APP_TAG: return APP_TAG_CHECK;
            case REF_TAG: return REF_TAG_CHECK;
            default: throw new IllegalArgumentException("no status for PI error kind " + kind);
        }
    }

    /** The PI error kind of a PI check status (the reverse of {@link #of}), or null for any other status. */
    public PiErrorKind piErrorKind() {
        switch (this) {
            case GUARD_CHECK: return PiErrorKind.GUARD;
            case APP_TAG_CHECK: return PiErrorKind.APP_TAG;
            case REF_TAG_CHECK: return PiErrorKind.REF_TAG;
            default: return null;
        }
    }
}
