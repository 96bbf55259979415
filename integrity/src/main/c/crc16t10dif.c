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

#include "clmul_fold.h"
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

TARGET_PCLMUL uint64_t pistore_crc16_pclmul(uint64_t crc, const uint8_t *p, size_t len) {
    if (len < 16) {
        return pistore_crc16_table(crc, p, len);
    }
    /* the register is added to the first 16 message bits, the top of the first chunk */
    __m128i init = _mm_set_epi64x((long long) ((crc & 0xFFFF) << 48), 0);
    __m128i x = fold_by_128(CRC16_FOLD, 1, init, &p, &len);
    return pistore_crc16_table(reduce128(x), p, len);
}

TARGET_VPCLMUL uint64_t pistore_crc16_vpclmul(uint64_t crc, const uint8_t *p, size_t len) {
    if (len < 256) {
        return pistore_crc16_pclmul(crc, p, len);
    }
    __m128i init = _mm_set_epi64x((long long) ((crc & 0xFFFF) << 48), 0);
    __m128i x = fold_by_512(CRC16_FOLD, 1, init, &p, &len);
    return pistore_crc16_table(reduce128(x), p, len);
}
