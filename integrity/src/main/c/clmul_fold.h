/*
 * Carry-less multiplication folding shared by the CRC kernels (crc16t10dif.c, crc64nvme.c), after
 * Intel's "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction". The folding is
 * the same for every polynomial: only the constants and the bit order differ. A kernel passes its
 * table fold[m] = the two multipliers that move a 128-bit chunk forward by 128*m bits (m = 1..16,
 * as its generator writes them) and whether chunks are loaded byte-reversed (non-reflected CRCs,
 * where the first message bit is the highest); it reduces the 128-bit remainder itself. The
 * functions are always inlined with a constant `reversed`, so no branch is left in the loops.
 */
#ifndef PISTORE_CLMUL_FOLD_H
#define PISTORE_CLMUL_FOLD_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

/* What the 128-bit and the 512-bit kernels need; init0 checks the CPU for the same (pistore_native.c). */
#define TARGET_PCLMUL __attribute__((target("pclmul,ssse3,sse4.1")))
#define TARGET_VPCLMUL __attribute__((target("pclmul,ssse3,sse4.1,avx2,avx512f,avx512vl,avx512bw,vpclmulqdq")))
#define FOLD_INLINE static inline __attribute__((always_inline))

/* x (a 128-bit chunk) moved forward by the distance of k and added to d. */
TARGET_PCLMUL FOLD_INLINE __m128i fold128(__m128i x, __m128i k, __m128i d) {
    __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
    __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(lo, hi), d);
}

TARGET_PCLMUL FOLD_INLINE __m128i fold_k(const uint64_t (*fold)[2], int m) {
    return _mm_set_epi64x((long long) fold[m][1], (long long) fold[m][0]);
}

/* 16 message bytes as a chunk; reversed: message byte 0 becomes bits 127..120. */
TARGET_PCLMUL FOLD_INLINE __m128i fold_load(const uint8_t *p, int reversed) {
    __m128i v = _mm_loadu_si128((const __m128i *) p);
    return reversed ? _mm_shuffle_epi8(v, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)) : v;
}

/* Folds 16-byte chunks onto x until fewer than 16 bytes are left. */
TARGET_PCLMUL FOLD_INLINE __m128i fold_singles(const uint64_t (*fold)[2], int reversed, __m128i x,
                                               const uint8_t **pp, size_t *lenp) {
    const uint8_t *p = *pp;
    size_t len = *lenp;
    __m128i k1 = fold_k(fold, 1);
    while (len >= 16) {
        x = fold128(x, k1, fold_load(p, reversed));
        p += 16;
        len -= 16;
    }
    *pp = p;
    *lenp = len;
    return x;
}

/*
 * The 128-bit kernel's folding: at least 16 bytes at *pp, `init` (the register, placed where the
 * first chunk's first bits are) added to the first chunk, 8 accumulators 1 KiB apart while 128
 * bytes remain, then single chunks. Returns the remainder to reduce; fewer than 16 bytes are left.
 */
TARGET_PCLMUL FOLD_INLINE __m128i fold_by_128(const uint64_t (*fold)[2], int reversed, __m128i init,
                                              const uint8_t **pp, size_t *lenp) {
    const uint8_t *p = *pp;
    size_t len = *lenp;
    __m128i x;
    if (len >= 128) {
        __m128i a[8];
        for (int i = 0; i < 8; i++) {
            a[i] = fold_load(p + 16 * i, reversed);
        }
        a[0] = _mm_xor_si128(a[0], init);
        p += 128;
        len -= 128;
        __m128i k8 = fold_k(fold, 8);
        while (len >= 128) {
            for (int i = 0; i < 8; i++) {
                a[i] = fold128(a[i], k8, fold_load(p + 16 * i, reversed));
            }
            p += 128;
            len -= 128;
        }
        x = a[7];
        for (int i = 0; i < 7; i++) {
            x = fold128(a[i], fold_k(fold, 7 - i), x);
        }
    } else {
        x = _mm_xor_si128(fold_load(p, reversed), init);
        p += 16;
        len -= 16;
    }
    *pp = p;
    *lenp = len;
    return fold_singles(fold, reversed, x, pp, lenp);
}

TARGET_VPCLMUL FOLD_INLINE __m512i fold512(__m512i x, __m512i k, __m512i d) {
    __m512i lo = _mm512_clmulepi64_epi128(x, k, 0x00);
    __m512i hi = _mm512_clmulepi64_epi128(x, k, 0x11);
    return _mm512_ternarylogic_epi64(lo, hi, d, 0x96);
}

TARGET_VPCLMUL FOLD_INLINE __m512i fold_k512(const uint64_t (*fold)[2], int m) {
    return _mm512_broadcast_i32x4(fold_k(fold, m));
}

TARGET_VPCLMUL FOLD_INLINE __m512i fold_load512(const uint8_t *p, int reversed) {
    __m512i v = _mm512_loadu_si512((const void *) p);
    return reversed ? _mm512_shuffle_epi8(v, _mm512_broadcast_i32x4(
            _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))) : v;
}

/*
 * The 512-bit kernel's folding: at least 256 bytes at *pp, `init` added to the first chunk, 4
 * accumulators of 64 bytes 2 KiB apart while 256 bytes remain, merged, then 64-byte steps, then the
 * 4 lanes merged and single chunks. Returns the remainder to reduce; fewer than 16 bytes are left.
 */
TARGET_VPCLMUL FOLD_INLINE __m128i fold_by_512(const uint64_t (*fold)[2], int reversed, __m128i init,
                                               const uint8_t **pp, size_t *lenp) {
    const uint8_t *p = *pp;
    size_t len = *lenp;
    __m512i z0 = fold_load512(p, reversed);
    __m512i z1 = fold_load512(p + 64, reversed);
    __m512i z2 = fold_load512(p + 128, reversed);
    __m512i z3 = fold_load512(p + 192, reversed);
    z0 = _mm512_xor_si512(z0, _mm512_zextsi128_si512(init));
    p += 256;
    len -= 256;
    __m512i k16 = fold_k512(fold, 16);
    while (len >= 256) {
        z0 = fold512(z0, k16, fold_load512(p, reversed));
        z1 = fold512(z1, k16, fold_load512(p + 64, reversed));
        z2 = fold512(z2, k16, fold_load512(p + 128, reversed));
        z3 = fold512(z3, k16, fold_load512(p + 192, reversed));
        p += 256;
        len -= 256;
    }
    /* 4 accumulators -> 1 (distances 1536, 1024, 512 bits) */
    z3 = fold512(z2, fold_k512(fold, 4), z3);
    z3 = fold512(z1, fold_k512(fold, 8), z3);
    z3 = fold512(z0, fold_k512(fold, 12), z3);
    /* while 64-byte chunks remain, fold by 512 bits */
    __m512i k4 = fold_k512(fold, 4);
    while (len >= 64) {
        z3 = fold512(z3, k4, fold_load512(p, reversed));
        p += 64;
        len -= 64;
    }
    /* 4 lanes -> 1: lanes 0, 1, 2 (earliest first) move forward by 384, 256, 128 bits onto lane 3 */
    __m512i kl = _mm512_set_epi64(0, 0, (long long) fold[1][1], (long long) fold[1][0],
                                  (long long) fold[2][1], (long long) fold[2][0],
                                  (long long) fold[3][1], (long long) fold[3][0]);
    __m512i lo = _mm512_clmulepi64_epi128(z3, kl, 0x00);
    __m512i hi = _mm512_clmulepi64_epi128(z3, kl, 0x11);
    __m512i f = _mm512_xor_si512(lo, hi);
    __m128i x = _mm_xor_si128(_mm_xor_si128(_mm512_extracti32x4_epi32(f, 0), _mm512_extracti32x4_epi32(f, 1)),
                              _mm_xor_si128(_mm512_extracti32x4_epi32(f, 2), _mm512_extracti32x4_epi32(z3, 3)));
    *pp = p;
    *lenp = len;
    return fold_singles(fold, reversed, x, pp, lenp);
}

#endif
