package io.pistore.integrity;

import io.pistore.integrity.internal.Crc16T10Dif;
import io.pistore.integrity.internal.Crc32cGuard;
import io.pistore.integrity.internal.Crc64Nvme;
import io.pistore.integrity.internal.GuardAlgorithm;
import io.pistore.integrity.internal.IpChecksum;
import io.pistore.integrity.internal.NativeGuards;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;

/**
 * The guard algorithm of a PI format, and with it the tuple layout.
 *
 * <p>Layouts (all fields big-endian):
 * <ul>
 *   <li>{@link #CRC16} and {@link #IP_CHECKSUM}: 8 bytes = guard u16 | app tag u16 | ref tag u32.
 *   <li>{@link #CRC32C}: 16 bytes = guard u32 | app tag u16 | 80-bit storage/ref space, of which the
 *       reference tag is the low 64 bits (bytes 8..15); bytes 6..7 are written as zero.
 *   <li>{@link #CRC64}: 16 bytes = guard u64 | app tag u16 | ref tag u48.
 * </ul>
 */
public enum GuardType {
    /** CRC-16/T10-DIF: poly 0x8BB7, init 0, not reflected, no final xor. */
    CRC16("crc16", 8, 2, 2, 4, 4, Crc16T10Dif.INSTANCE),
    /** 16-bit ones' complement IP checksum (the DIX memory-side guard of SCSI). */
    IP_CHECKSUM("ip", 8, 2, 2, 4, 4, IpChecksum.INSTANCE),
    /** CRC-32C (Castagnoli), the NVMe 32b guard. */
    CRC32C("crc32c", 16, 4, 4, 8, 8, Crc32cGuard.INSTANCE),
    /** CRC-64/NVME (Rocksoft), the NVMe 64b guard. */
    CRC64("crc64", 16, 8, 8, 10, 6, Crc64Nvme.INSTANCE);

    private final String cliName;
    private final int tupleSize;
    private final int guardSize;
    private final int appTagOffset;
    private final int refTagOffset;
    private final int refTagSize;
    private final GuardAlgorithm algorithm;
    private final GuardAlgorithm javaAlgorithm;
    private final GuardAlgorithm nativeAlgorithm;

    GuardType(String cliName, int tupleSize, int guardSize, int appTagOffset, int refTagOffset,
              int refTagSize, GuardAlgorithm java) {
        this.cliName = cliName;
        this.tupleSize = tupleSize;
        this.guardSize = guardSize;
        this.appTagOffset = appTagOffset;
        this.refTagOffset = refTagOffset;
        this.refTagSize = refTagSize;
        this.javaAlgorithm = java;
        this.algorithm = NativeGuards.select(java);
        this.nativeAlgorithm = NativeGuards.nativeAlgorithm(java);
    }

    /** Short name used on the command line and in configuration: crc16, ip, crc32c, crc64. */
    public String cliName() {
        return cliName;
    }

    /** Bytes of the PI tuple: 8 or 16. */
    public int tupleSize() {
        return tupleSize;
    }

    /** Bytes of the guard field: 2, 4 or 8. */
    public int guardSize() {
        return guardSize;
    }

    public int appTagOffset() {
        return appTagOffset;
    }

    public int refTagOffset() {
        return refTagOffset;
    }

    /** Bytes of the reference tag: 4, 8 or 6. */
    public int refTagSize() {
        return refTagSize;
    }

    /** All-ones value of the reference tag at this format's width (the Type 3 escape). */
    public long refTagMask() {
        return refTagSize == 8 ? -1L : (1L << (refTagSize * 8)) - 1;
    }

    /** All-ones value of the guard at this format's width. */
    public long guardMask() {
        return guardSize == 8 ? -1L : (1L << (guardSize * 8)) - 1;
    }

    /** Whether an RDMA HCA can check this guard in its signature engine (8-byte tuples only). */
    public boolean isEightByteTuple() {
        return tupleSize == 8;
    }

    /** The guard over {@code [position, limit)} of {@code buf}, with seed 0; the buffer is not moved. */
    public long compute(ByteBuffer buf) {
        return compute(buf, 0);
    }

    /** The guard over {@code [position, limit)} of {@code buf} with a guard seed; the buffer is not moved. */
    public long compute(ByteBuffer buf, long seed) {
        GuardAlgorithm a = algorithm;
        ByteBuffer b = buf.order() == ByteOrder.BIG_ENDIAN ? buf : buf.duplicate().order(ByteOrder.BIG_ENDIAN);
        return a.finish(a.update(a.start(seed), b, b.position(), b.remaining()));
    }

    /** The guard over {@code len} bytes of {@code b} at {@code off}, with seed 0. */
    public long compute(byte[] b, int off, int len) {
        GuardAlgorithm a = algorithm;
        return a.finish(a.update(a.start(0), b, off, len));
    }

    /** A running guard (seed 0) to feed a stream of bytes in pieces. */
    public GuardDigest newDigest() {
        return new GuardDigest(this);
    }

    /** Engine access: the algorithm behind this guard. */
    GuardAlgorithm algorithm() {
        return algorithm;
    }

    /**
     * The algorithm a {@link GuardPath.Use} asks for. NATIVE on a guard without a native kernel gives
     * the Java one ({@link PiContext} refuses NATIVE for such a format's own guard; this covers the
     * target guard of a conversion, e.g. to the IP checksum).
     */
    GuardAlgorithm algorithm(GuardPath.Use use) {
        switch (use) {
            case JAVA: return javaAlgorithm;
            case NATIVE: return nativeAlgorithm != null ? nativeAlgorithm : javaAlgorithm;
            default: return algorithm;
        }
    }

    /**
     * Whether this process has a native kernel for this guard (whether or not it is the default
     * one: CRC-32C through ISA-L is native-capable but the JDK intrinsic is bound by default).
     */
    public boolean hasNativePath() {
        return nativeAlgorithm != null;
    }

    /** Whether the path this guard uses by default ({@link GuardPath.Use#DEFAULT}) is native. */
    public boolean isNativeByDefault() {
        return algorithm != javaAlgorithm;
    }

    /** Parses crc16 | ip | crc32c | crc64 (case-insensitive; also t10dif, ipcsum, crc64nvme). */
    public static GuardType parse(String s) {
        String n = s.trim().toLowerCase(Locale.ROOT);
        switch (n) {
            case "crc16": case "t10dif": case "crc16-t10dif": return CRC16;
            case "ip": case "ipcsum": case "ip-checksum": case "csum": return IP_CHECKSUM;
            case "crc32c": case "castagnoli": return CRC32C;
            case "crc64": case "crc64nvme": case "crc64-nvme": return CRC64;
            default:
                throw new IllegalArgumentException("unknown guard '" + s + "' (expected crc16, ip, crc32c or crc64)");
        }
    }
}
