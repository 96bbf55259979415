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

#include "clmul_fold.h"
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

TARGET_PCLMUL uint64_t pistore_crc64_pclmul(uint64_t crc, const uint8_t *p, size_t len) {
    if (len < 16) {
        return pistore_crc64_table(crc, p, len);
    }
    __m128i x = fold_by_128(CRC64_FOLD, 0, _mm_cvtsi64_si128((long long) crc), &p, &len);
    return pistore_crc64_table(reduce128(x), p, len);
}

TARGET_VPCLMUL uint64_t pistore_crc64_vpclmul(uint64_t crc, const uint8_t *p, size_t len) {
    if (len < 256) {
        return pistore_crc64_pclmul(crc, p, len);
    }
    __m128i x = fold_by_512(CRC64_FOLD, 0, _mm_cvtsi64_si128((long long) crc), &p, &len);
    return pistore_crc64_table(reduce128(x), p, len);
}
