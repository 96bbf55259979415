package io.pistore.integrity.reference;

import io.pistore.integrity.GuardType;

/**
 * Plain bit-at-a-time guard functions, written straight from the CRC definitions with no tables and
 * no shortcuts. Every fast path in the library is cross-checked against these. Slow on purpose.
 */
public final class ReferenceGuards {
    private ReferenceGuards() {
    }

    /** CRC-16/T10-DIF: poly 0x8BB7, MSB first, register starts at {@code seed}, no final xor. */
    public static int crc16(int seed, byte[] b, int off, int len) {
        int crc = seed & 0xFFFF;
        for (int i = off; i < off + len; i++) {
            crc ^= (b[i] & 0xFF) << 8;
            for (int k = 0; k < 8; k++) {
                crc = (crc & 0x8000) != 0 ? ((crc << 1) ^ 0x8BB7) & 0xFFFF : (crc << 1) & 0xFFFF;
            }
        }
        return crc;
    }

    /** CRC-32C, reflected; register starts at {@code ~seed}, final xor all-ones (seed 0 = standard). */
    public static long crc32c(long seed, byte[] b, int off, int len) {
        long crc = ~seed & 0xFFFFFFFFL;
        for (int i = off; i < off + len; i++) {
            crc ^= b[i] & 0xFF;
            for (int k = 0; k < 8; k++) {
                crc = (crc & 1) != 0 ? (crc >>> 1) ^ 0x82F63B78L : crc >>> 1;
            }
        }
        return ~crc & 0xFFFFFFFFL;
    }

    /** CRC-64/NVME, reflected; register starts at {@code ~seed}, final xor all-ones (seed 0 = standard). */
    public static long crc64(long seed, byte[] b, int off, int len) {
        long poly = Long.reverse(0xAD93D23594C93659L);
        long crc = ~seed;
        for (int i = off; i < off + len; i++) {
            crc ^= b[i] & 0xFF;
            for (int k = 0; k < 8; k++) {
                crc = (crc & 1) != 0 ? (crc >>> 1) ^ poly : crc >>> 1;
            }
        }
        return ~crc;
    }

    /** IP checksum: ones' complement of the ones' complement sum (plus seed) of big-endian 16-bit words. */
    public static int ipChecksum(int seed, byte[] b, int off, int len) {
        long sum = seed & 0xFFFF;
        for (int i = 0; i < len; i += 2) {
            int hi = b[off + i] & 0xFF;
            int lo = i + 1 < len ? b[off + i + 1] & 0xFF : 0;
            sum += (hi << 8) | lo;
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        sum = (sum & 0xFFFF) + (sum >>> 16);
        return (int) (~sum & 0xFFFF);
    }

    /** The guard of {@code len} bytes under {@code type} with {@code seed}. */
    public static long guard(GuardType type, long seed, byte[] b, int off, int len) {
        switch (type) {
            case CRC16: return crc16((int) seed, b, off, len);
            case IP_CHECKSUM: return ipChecksum((int) seed, b, off, len);
            case CRC32C: return crc32c(seed, b, off, len);
            default: return crc64(seed, b, off, len);
        }
    }
}
