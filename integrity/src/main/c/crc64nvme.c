/*
 * CRC-64/NVME (Rocksoft) by carry-less multiplication folding, after Intel's "Fast CRC Computation
 * for Generic Polynomials Using PCLMULQDQ Instruction", in its bit-reflected form. Two kernels:
 * 128-bit PCLMULQDQ with 8 accumulators (1 KiB fold distance), and 512-bit VPCLMULQDQ with 4
 * accumulators (2 KiB fold distance). Runs shorter than 16 bytes and the last len % 16 bytes go
 * through a slicing-by-8 table. The register is passed in and returned raw (init and final xor are
 * the caller's business), exactly like the Java Crc64Nvme state.
 */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "crc64nvme_constants.h"
#include "pistore_native.h"

static uint64_t T64[8][256];

void pistore_crc64_init_tables(void) {
    for (int b = 0; b < 256; b++) {
        uint64_t c = (uint64_t) b;
        for (int i = 0; i < 8; i++) {
            c = (c & 1) ? (c >> 1) ^ CRC64_POLY : c >> 1;
        }
        T64[0][b] = c;
    }
    for (int k = 1; k < 8; k++) {
        for (int b = 0; b < 256; b++) {
            uint64_t p = T64[k - 1][b];
            T64[k][b] = (p >> 8) ^ T64[0][p & 0xFF];
        }
    }
}

uint64_t pistore_crc64_table(uint64_t crc, const uint8_t *p, size_t len) {
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8); /* little-endian host */
        w ^= crc;
        crc = T64[7][w & 0xFF] ^ T64[6][(w >> 8) & 0xFF] ^ T64[5][(w >> 16) & 0xFF]
            ^ T64[4][(w >> 24) & 0xFF] ^ T64[3][(w >> 32) & 0xFF] ^ T64[2][(w >> 40) & 0xFF]
            ^ T64[1][(w >> 48) & 0xFF] ^ T64[0][w >> 56];
        p += 8;
        len -= 8;
    }
    while (len--) {
        crc = T64[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    }
    return crc;
}

#define TARGET_PCLMUL __attribute__((target("pclmul,sse4.1")))
#define TARGET_VPCLMUL __attribute__((target("pclmul,sse4.1,avx2,avx512f,avx512vl,vpclmulqdq")))

/* x (a 128-bit chunk) moved forward by the distance of k and added to d. */
TARGET_PCLMUL static inline __m128i fold128(__m128i x, __m128i k, __m128i d) {
    __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
    __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(lo, hi), d);
}

TARGET_PCLMUL static inline __m128i kfold(int m) {
    return _mm_set_epi64x((long long) CRC64_FOLD[m][1], (long long) CRC64_FOLD[m][0]);
}

/* The CRC register for the message held in x: (x * x^64) mod P, by one fold and Barrett. */
TARGET_PCLMUL static inline uint64_t reduce128(__m128i x) {
    __m128i z = _mm_xor_si128(_mm_clmulepi64_si128(x, _mm_cvtsi64_si128((long long) CRC64_K127), 0x00),
                              _mm_srli_si128(x, 8));
    uint64_t u = (uint64_t) _mm_cvtsi128_si64(z);          /* high-degree half, reflected */
    uint64_t v = (uint64_t) _mm_extract_epi64(z, 1);        /* low-degree half, reflected */
    __m128i t = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long) u),
                                     _mm_cvtsi64_si128((long long) CRC64_MU), 0x00);
    uint64_t q = u ^ ((uint64_t) _mm_cvtsi128_si64(t) << 1);
    __m128i r = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long) q),
                                     _mm_cvtsi64_si128((long long) CRC64_POLY), 0x00);
    uint64_t r0 = (uint64_t) _mm_cvtsi128_si64(r);
    uint64_t r1 = (uint64_t) _mm_extract_epi64(r, 1);
    return ((r1 << 1) | (r0 >> 63)) ^ v;
}

/* Folds 16-byte chunks onto x until fewer than 16 bytes are left. */
TARGET_PCLMUL static inline __m128i fold_singles(__m128i x, const uint8_t **pp, size_t *lenp) {
    const uint8_t *p = *pp;
    size_t len = *lenp;
    __m128i k1 = kfold(1);
    while (len >= 16) {
        x = fold128(x, k1, _mm_loadu_si128((const __m128i *) p));
        p += 16;
        len -= 16;
    }
    *pp = p;
    *lenp = len;
    return x;
}

TARGET_PCLMUL uint64_t pistore_crc64_pclmul(uint64_t crc, const uint8_t *p, size_t len) {
    if (len < 16) {
        return pistore_crc64_table(crc, p, len);
    }
    __m128i x;
    __m128i init = _mm_cvtsi64_si128((long long) crc);
    if (len >= 128) {
        __m128i a[8];
        for (int i = 0; i < 8; i++) {
            a[i] = _mm_loadu_si128((const __m128i *) (p + 16 * i));
        }
        a[0] = _mm_xor_si128(a[0], init);
        p += 128;
        len -= 128;
        __m128i k8 = kfold(8);
        while (len >= 128) {
            for (int i = 0; i < 8; i++) {
                a[i] = fold128(a[i], k8, _mm_loadu_si128((const __m128i *) (p + 16 * i)));
            }
            p += 128;
            len -= 128;
        }
        x = a[7];
        for (int i = 0; i < 7; i++) {
            x = fold128(a[i], kfold(7 - i), x);
        }
    } else {
        x = _mm_xor_si128(_mm_loadu_si128((const __m128i *) p), init);
        p += 16;
        len -= 16;
    }
    x = fold_singles(x, &p, &len);
    return pistore_crc64_table(reduce128(x), p, len);
}

TARGET_VPCLMUL static inline __m512i fold512(__m512i x, __m512i k, __m512i d) {
    __m512i lo = _mm512_clmulepi64_epi128(x, k, 0x00);
    __m512i hi = _mm512_clmulepi64_epi128(x, k, 0x11);
    return _mm512_ternarylogic_epi64(lo, hi, d, 0x96);
}

TARGET_VPCLMUL static inline __m512i kfold512(int m) {
    return _mm512_broadcast_i32x4(_mm_set_epi64x((long long) CRC64_FOLD[m][1], (long long) CRC64_FOLD[m][0]));
}

TARGET_VPCLMUL uint64_t pistore_crc64_vpclmul(uint64_t crc, const uint8_t *p, size_t len) {
    if (len < 256) {
        return pistore_crc64_pclmul(crc, p, len);
    }
    __m512i z0 = _mm512_loadu_si512((const void *) p);
    __m512i z1 = _mm512_loadu_si512((const void *) (p + 64));
    __m512i z2 = _mm512_loadu_si512((const void *) (p + 128));
    __m512i z3 = _mm512_loadu_si512((const void *) (p + 192));
    z0 = _mm512_xor_si512(z0, _mm512_zextsi128_si512(_mm_cvtsi64_si128((long long) crc)));
    p += 256;
    len -= 256;
    __m512i k16 = kfold512(16);
    while (len >= 256) {
        z0 = fold512(z0, k16, _mm512_loadu_si512((const void *) p));
        z1 = fold512(z1, k16, _mm512_loadu_si512((const void *) (p + 64)));
        z2 = fold512(z2, k16, _mm512_loadu_si512((const void *) (p + 128)));
        z3 = fold512(z3, k16, _mm512_loadu_si512((const void *) (p + 192)));
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
        z3 = fold512(z3, k4, _mm512_loadu_si512((const void *) p));
        p += 64;
        len -= 64;
    }
    /* 4 lanes -> 1: lanes 0, 1, 2 move forward by 384, 256, 128 bits onto lane 3 */
    __m512i kl = _mm512_set_epi64(0, 0, (long long) CRC64_FOLD[1][1], (long long) CRC64_FOLD[1][0],
                                  (long long) CRC64_FOLD[2][1], (long long) CRC64_FOLD[2][0],
                                  (long long) CRC64_FOLD[3][1], (long long) CRC64_FOLD[3][0]);
    __m512i lo = _mm512_clmulepi64_epi128(z3, kl, 0x00);
    __m512i hi = _mm512_clmulepi64_epi128(z3, kl, 0x11);
    __m512i f = _mm512_xor_si512(lo, hi);
    __m128i x = _mm_xor_si128(_mm_xor_si128(_mm512_extracti32x4_epi32(f, 0), _mm512_extracti32x4_epi32(f, 1)),
                              _mm_xor_si128(_mm512_extracti32x4_epi32(f, 2), _mm512_extracti32x4_epi32(z3, 3)));
    x = fold_singles(x, &p, &len);
    return pistore_crc64_table(reduce128(x), p, len);
}
