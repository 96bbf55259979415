package io.pistore.spi;

import io.pistore.integrity.CheckFlags;
import java.util.Objects;

/**
 * Who does the PI work of one request, carried with it from the host or frontend to the volume: what
 * the wire carries, which hop generates the PI (PRACT insert), which fields are to be checked, and
 * which of them a hop has already taken on, and which hop. The Linux block layer's per-request
 * integrity flags and SPDK's {@code dif_ctx} flags answer the same question.
 *
 * <p>Each hop asks the duty what is left for it ({@link #left}), does that, and hands on the duty
 * with what it did recorded ({@link #checkedBy}): so each check happens once, at the first hop that
 * can make it. For a <b>write</b> the hop named in {@link #checker} checked the fields before the
 * target; for a <b>read</b> it checks them after the target, as the PI travels back to the host, so
 * the target returns the stored PI without checking those fields itself.
 *
 * <p>Immutable; the few values every request of a kind shares are constants, so a transport
 * allocates none per request for them.
 */
public final class PiDuty {
    /** The places along a request's path where PI can be generated or checked. */
    public enum Hop {
        /** The host's process: its application, or its transport end (the tcp host's encoder and decoder). */
        HOST,
        /** The transport on the target's side, as the bytes cross (the tcp target's stream check, an RDMA integrity MR). */
        WIRE,
        /** The target service, before it stores or after it reads. */
        TARGET,
        /** The volume, before a replicated volume sends a write to its group. */
        VOLUME,
        /** A replica of a replicated volume: the leader on entry, each follower before it applies. */
        REPLICA,
        /** The stored blocks: read back by scrub or a self-healing read. */
        MEDIA
    }

    /** No PI work: a request to a volume without PI, or one that carries none. */
    public static final PiDuty NONE = new PiDuty(false, null, CheckFlags.NONE, CheckFlags.NONE, null);

    private final boolean wirePi;
    private final Hop generator;
    private final CheckFlags checks;
    private final CheckFlags checked;
    private final Hop checker;

    private PiDuty(boolean wirePi, Hop generator, CheckFlags checks, CheckFlags checked, Hop checker) {
        this.wirePi = wirePi;
        this.generator = generator;
        this.checks = Objects.requireNonNull(checks, "checks");
        this.checked = Objects.requireNonNull(checked, "checked");
        this.checker = checker;
    }

    /**
     * The duty of a request as its protection fields ask, before any hop did anything: with PRACT the
     * target generates the PI (insert) and the wire carries none; without, the PI travels with the
     * data. The check flags are the fields to check; none is checked yet.
     */
    public static PiDuty of(Protection p) {
        return AS_ASKED[p.pract() ? 1 : 0][p.checks().bits()];
    }

    /** {@link #of}'s answers, by PRACT and check bits: made once. */
    private static final PiDuty[][] AS_ASKED = new PiDuty[2][8];

    static {
        for (int bits = 0; bits < 8; bits++) {
            CheckFlags c = CheckFlags.fromBits(bits);
            AS_ASKED[0][bits] = new PiDuty(true, null, c, CheckFlags.NONE, null);
            AS_ASKED[1][bits] = new PiDuty(false, Hop.TARGET, c, CheckFlags.NONE, null);
        }
    }

    /**
     * The duty whose PI was generated at {@code hop} (a hop before the target: the host's transport,
     * an RDMA integrity MR): it then travels with the data, and the target does not generate it again.
     */
    public PiDuty generatedBy(Hop hop) {
        Objects.requireNonNull(hop, "hop");
        return new PiDuty(wirePi || hop == Hop.HOST, hop, checks, checked, checker);
    }

    /** {@link #checkedBy(Hop, CheckFlags)} of every field this duty asks to check. */
    public PiDuty checkedBy(Hop hop) {
        return checkedBy(hop, checks);
    }

    /**
     * This duty with {@code fields} taken on by {@code hop} (added to those checked before): for a
     * write, checked there and passed; for a read, checked there on the way back to the host.
     */
    public PiDuty checkedBy(Hop hop, CheckFlags fields) {
        Objects.requireNonNull(hop, "hop");
        CheckFlags all = CheckFlags.fromBits(checked.bits() | fields.bits());
        if (all.bits() == checked.bits() && hop == checker) {
            return this;
        }
        return new PiDuty(wirePi, generator, checks, all, hop);
    }

    /** Whether the PI crosses the wire with the data (false: PRACT, and no hop before the target generated it). */
    public boolean wirePi() {
        return wirePi;
    }

    /** The hop that generates the PI of a write (PRACT insert); null when the PI comes from the host's memory. */
    public Hop generator() {
        return generator;
    }

    /** Whether {@code hop} is the one to generate the PI. */
    public boolean generates(Hop hop) {
        return generator == hop;
    }

    /** The fields the request asks to check. */
    public CheckFlags checks() {
        return checks;
    }

    /** The fields a hop has taken on so far. */
    public CheckFlags checked() {
        return checked;
    }

    /** The hop that last took fields on; null when none has. */
    public Hop checker() {
        return checker;
    }

    /** The fields asked for that no hop has taken on yet: what the hop asking must check. */
    public CheckFlags left() {
        return CheckFlags.fromBits(checks.bits() & ~checked.bits());
    }

    /** Whether every field of {@code fields} has been taken on by some hop. */
    public boolean covers(CheckFlags fields) {
        return (fields.bits() & ~checked.bits()) == 0;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PiDuty d && d.wirePi == wirePi && d.generator == generator && d.checks.equals(checks)
                && d.checked.equals(checked) && d.checker == checker;
    }

    @Override
    public int hashCode() {
        return Objects.hash(wirePi, generator, checks, checked, checker);
    }

    @Override
    public String toString() {
        return "wire=" + (wirePi ? "pi" : "data") + " generate=" + (generator == null ? "-" : generator)
                + " checks=" + checks + " checked=" + checked + (checker == null ? "" : " by " + checker);
    }
}
