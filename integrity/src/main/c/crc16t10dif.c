/*
 * CRC-16/T10-DIF (poly 0x8BB7, MSB-first, init 0, no final xor) by carry-less multiplication
 * folding, after Intel's "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ
 * Instruction", in its non-reflected form. Each 16-byte chunk is loaded byte-reversed so that bit i
 * of the register is the coefficient of x^i (the first message bit is the highest). Two kernels:
 * 128-bit PCLMULQDQ with 8 accumulators (1 KiB fold distance), and 512-bit VPCLMULQDQ with 4
 * accumulators (2 KiB fold distance). The folded 128-bit remainder is reduced to 16 bits with
 * three multiplications and a Barrett step; runs shorter than 16 bytes and the last len % 16
 * bytes go through a byte table. The register is passed in and returned raw, exactly like the
 * Java Crc16T10Dif state; constants come from gen_crc16_constants.c.
 */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "crc16t10dif_constants.h"
#include "pistore_native.h"

static uint16_t T16[256];

void pistore_crc16_init_tables(void) {
    for (int b = 0; b < 256; b++) {
        uint32_t c = (uint32_t) b << 8;
        for (int i = 0; i < 8; i++) {
            c = (c & 0x8000) ? (c << 1) ^ (uint32_t) CRC16_POLY : c << 1;
        }
        T16[b] = (uint16_t) c;
    }
}

uint64_t pistore_crc16_table(uint64_t crc, const uint8_t *p, size_t len) {
    uint32_t c = (uint32_t) crc & 0xFFFF;
    while (len--) {
        c = ((c << 8) & 0xFFFF) ^ T16[(c >> 8) ^ *p++];
    }
    return c;
}

#define TARGET_PCLMUL __attribute__((target("pclmul,ssse3,sse4.1")))
#define TARGET_VPCLMUL __attribute__((target("pclmul,ssse3,sse4.1,avx2,avx512f,avx512vl,avx512bw,vpclmulqdq")))

/* Reverses the 16 bytes of a chunk: message byte 0 becomes bits 127..120. */
TARGET_PCLMUL static inline __m128i bswap_mask(void) {
    return _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

TARGET_PCLMUL static inline __m128i load_rev(const uint8_t *p, __m128i bs) {
    return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) p), bs);
}

/* x (a 128-bit chunk) moved forward by the distance of k and added to d. */
TARGET_PCLMUL static inline __m128i fold128(__m128i x, __m128i k, __m128i d) {
    __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
    __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(lo, hi), d);
}

TARGET_PCLMUL static inline __m128i kfold(int m) {
    return _mm_set_epi64x((long long) CRC16_FOLD[m][1], (long long) CRC16_FOLD[m][0]);
}

/* The CRC register for the message held in x: (x * x^16) mod P. */
TARGET_PCLMUL static inline uint64_t reduce128(__m128i x) {
    /* y = x * x^16, congruent, below x^80 */
    __m128i y = fold128(x, _mm_set_epi64x((long long) CRC16_K80, (long long) CRC16_K16), _mm_setzero_si128());
    uint64_t yl = (uint64_t) _mm_cvtsi128_si64(y);
    uint64_t yh = (uint64_t) _mm_extract_epi64(y, 1);
    /* z = y with its x^64..x^79 part folded down: below x^64 */
    __m128i t = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long) yh), _mm_cvtsi64_si128((long long) CRC16_K64),
                                     0x00);
    uint64_t z = yl ^ (uint64_t) _mm_cvtsi128_si64(t);
    /* Barrett: q = floor(z / P) exactly, then z - q * P has degree < 16 */
    __m128i qm = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long) (z >> 16)),
                                      _mm_cvtsi64_si128((long long) CRC16_MU), 0x00);
    uint64_t q = ((uint64_t) _mm_cvtsi128_si64(qm) >> 48) | ((uint64_t) _mm_extract_epi64(qm, 1) << 16);
    __m128i qp = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long) q), _mm_cvtsi64_si128((long long) CRC16_POLY),
                                      0x00);
    return (z ^ (uint64_t) _mm_cvtsi128_si64(qp)) & 0xFFFF;
}

/* Folds 16-byte chunks onto x until fewer than 16 bytes are left. */
TARGET_PCLMUL static inline __m128i fold_singles(__m128i x, const uint8_t **pp, size_t *lenp, __m128i bs) {
    const uint8_t *p = *pp;
    size_t len = *lenp;
    __m128i k1 = kfold(1);
    while (len >= 16) {
        x = fold128(x, k1, load_rev(p, bs));
        p += 16;
        len -= 16;
    }
    *pp = p;
    *lenp = len;
    return x;
}

TARGET_PCLMUL uint64_t pistore_crc16_pclmul(uint64_t crc, const uint8_t *p, size_t len) {
    if (len < 16) {
        return pistore_crc16_table(crc, p, len);
    }
    __m128i bs = bswap_mask();
    /* the register is added to the first 16 message bits, the top of the first chunk */
    __m128i init = _mm_set_epi64x((long long) ((crc & 0xFFFF) << 48), 0);
    __m128i x;
    if (len >= 128) {
        __m128i a[8];
        for (int i = 0; i < 8; i++) {
            a[i] = load_rev(p + 16 * i, bs);
        }
        a[0] = _mm_xor_si128(a[0], init);
        p += 128;
        len -= 128;
        __m128i k8 = kfold(8);
        while (len >= 128) {
            for (int i = 0; i < 8; i++) {
                a[i] = fold128(a[i], k8, load_rev(p + 16 * i, bs));
            }
            p += 128;
            len -= 128;
        }
        x = a[7];
        for (int i = 0; i < 7; i++) {
            x = fold128(a[i], kfold(7 - i), x);
        }
    } else {
        x = _mm_xor_si128(load_rev(p, bs), init);
        p += 16;
        len -= 16;
    }
    x = fold_singles(x, &p, &len, bs);
    return pistore_crc16_table(reduce128(x), p, len);
}

TARGET_VPCLMUL static inline __m512i fold512(__m512i x, __m512i k, __m512i d) {
    __m512i lo = _mm512_clmulepi64_epi128(x, k, 0x00);
    __m512i hi = _mm512_clmulepi64_epi128(x, k, 0x11);
    return _mm512_ternarylogic_epi64(lo, hi, d, 0x96);
}

TARGET_VPCLMUL static inline __m512i kfold512(int m) {
    return _mm512_broadcast_i32x4(kfold(m));
}

TARGET_VPCLMUL static inline __m512i load512_rev(const uint8_t *p, __m512i bs) {
    return _mm512_shuffle_epi8(_mm512_loadu_si512((const void *) p), bs);
}

TARGET_VPCLMUL uint64_t pistore_crc16_vpclmul(uint64_t crc, const uint8_t *p, size_t len) {
    if (len < 256) {
        return pistore_crc16_pclmul(crc, p, len);
    }
    __m512i bs = _mm512_broadcast_i32x4(bswap_mask());
    __m512i z0 = load512_rev(p, bs);
    __m512i z1 = load512_rev(p + 64, bs);
    __m512i z2 = load512_rev(p + 128, bs);
    __m512i z3 = load512_rev(p + 192, bs);
    z0 = _mm512_xor_si512(z0, _mm512_zextsi128_si512(_mm_set_epi64x((long long) ((crc & 0xFFFF) << 48), 0)));
    p += 256;
    len -= 256;
    __m512i k16 = kfold512(16);
    while (len >= 256) {
        z0 = fold512(z0, k16, load512_rev(p, bs));
        z1 = fold512(z1, k16, load512_rev(p + 64, bs));
        z2 = fold512(z2, k16, load512_rev(p + 128, bs));
        z3 = fold512(z3, k16, load512_rev(p + 192, bs));
        p += 256;
        len -= 256;
    }
    /* 4 accumulators -> 1 (distances 1536, 1024, 512 bits) */
    z3 = fold512(z2, kfold512(4), z3);
    z3 = fold512(z1, kfold512(8), z3);
    z3 = fold512(z0, kfold512(12), z3);
    /* while 64-byte chunks remain, fold by 512 bits */
    __m512i k4 = kfold512(4);
    while (len >= 64) {
        z3 = fold512(z3, k4, load512_rev(p, bs));
        p += 64;
        len -= 64;
    }
    /* 4 lanes -> 1: lanes 0, 1, 2 (earliest first) move forward by 384, 256, 128 bits onto lane 3 */
    __m512i kl = _mm512_set_epi64(0, 0, (long long) CRC16_FOLD[1][1], (long long) CRC16_FOLD[1][0],
                                  (long long) CRC16_FOLD[2][1], (long long) CRC16_FOLD[2][0],
                                  (long long) CRC16_FOLD[3][1], (long long) CRC16_FOLD[3][0]);
    __m512i lo = _mm512_clmulepi64_epi128(z3, kl, 0x00);
    __m512i hi = _mm512_clmulepi64_epi128(z3, kl, 0x11);
    __m512i f = _mm512_xor_si512(lo, hi);
    __m128i x = _mm_xor_si128(_mm_xor_si128(_mm512_extracti32x4_epi32(f, 0), _mm512_extracti32x4_epi32(f, 1)),
                              _mm_xor_si128(_mm512_extracti32x4_epi32(f, 2), _mm512_extracti32x4_epi32(z3, 3)));
    x = fold_singles(x, &p, &len, _mm512_castsi512_si128(bs));
    return pistore_crc16_table(reduce128(x), p, len);
}
