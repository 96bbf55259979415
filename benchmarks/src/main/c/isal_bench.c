/*
 * The ISA-L side of docs/NATIVE.md: the same 1 MiB buffers and block sizes as NativeGuardBench,
 * calling ISA-L (and pistore's own CRC-16/T10-DIF and CRC-64/NVME kernels, linked from
 * integrity/src/main/c) directly from C, one call per block. Reports GB/s of data (1 MiB =
 * 1.048576 GB). Before measuring, it checks our CRC-16 kernels against ISA-L's crc16_t10dif for
 * every length 0..4200 at three offsets and exits 1 on a mismatch.
 *
 *   gcc -O3 -o /tmp/isal_bench benchmarks/src/main/c/isal_bench.c integrity/src/main/c/crc16t10dif.c \
 *       integrity/src/main/c/crc64nvme.c -Iintegrity/src/main/c -lisal && /tmp/isal_bench [seconds-per-line [cpu]]
 */
#include <isa-l/crc.h>
#include <isa-l/crc64.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pistore_native.h"

#define MIB (1 << 20)

/* argv[2] "cpu": time by this thread's CPU time (excludes time the scheduler gave to other tenants). */
static clockid_t clock_id = CLOCK_MONOTONIC;

static double now(void) {
    struct timespec t;
    clock_gettime(clock_id, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static volatile uint64_t sink;
static double seconds = 1.0;

typedef uint64_t (*kernel)(const uint8_t *, size_t);

static uint64_t k_crc16(const uint8_t *p, size_t n) { return crc16_t10dif(0, p, n); }
static uint64_t k_crc16ours(const uint8_t *p, size_t n) { return pistore_crc16_vpclmul(0, p, n); }
static uint64_t k_crc16ours128(const uint8_t *p, size_t n) { return pistore_crc16_pclmul(0, p, n); }
static uint64_t k_crc32c(const uint8_t *p, size_t n) { return crc32_iscsi((unsigned char *) p, (int) n, 0xFFFFFFFF); }
static uint64_t k_crc64ecma(const uint8_t *p, size_t n) { return crc64_ecma_refl(0, p, n); }
static uint64_t k_crc64nvme(const uint8_t *p, size_t n) { return ~pistore_crc64_vpclmul(~0ULL, p, n); }
static uint64_t k_crc64nvme128(const uint8_t *p, size_t n) { return ~pistore_crc64_pclmul(~0ULL, p, n); }

static void put_be(uint8_t *p, uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; i--) {
        p[i] = (uint8_t) v;
        v >>= 8;
    }
}

static uint64_t get_be(const uint8_t *p, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

/* One pass over 1 MiB of data in blocks: guard only (gen=0), generate tuples (1), verify (2). */
static uint64_t pass(kernel k, uint8_t *buf, int ds, int ms, int gs, int mode) {
    uint64_t acc = 0;
    int n = MIB / ds;
    for (int i = 0; i < n; i++) {
        uint8_t *blk = buf + (size_t) i * (ds + ms);
        uint64_t g = k(blk, (size_t) ds);
        if (mode == 1) {
            put_be(blk + ds, g, gs);
            put_be(blk + ds + gs, 0, 2);
            put_be(blk + ds + gs + 2, (uint64_t) i + 1, ms - gs - 2);
        } else if (mode == 2) {
            if (get_be(blk + ds, gs) != g || get_be(blk + ds + gs + 2, ms - gs - 2) != (uint64_t) i + 1) {
                acc++;
            }
        } else {
            acc ^= g;
        }
    }
    return acc;
}

static void run(const char *name, kernel k, int ds, int ms, int gs, int mode) {
    size_t len = (size_t) (MIB / ds) * (ds + ms);
    uint8_t *buf = aligned_alloc(64, (len + 63) & ~(size_t) 63);
    for (size_t i = 0; i < len; i++) {
        buf[i] = (uint8_t) (rand() >> 7);
    }
    if (mode == 2) {
        pass(k, buf, ds, ms, gs, 1);
    }
    for (int w = 0; w < 50; w++) {
        sink ^= pass(k, buf, ds, ms, gs, mode);
    }
    long iters = 0;
    double t0 = now(), t;
    do {
        for (int j = 0; j < 20; j++) {
            sink ^= pass(k, buf, ds, ms, gs, mode);
        }
        iters += 20;
        t = now();
    } while (t - t0 < seconds);
    const char *op = mode == 0 ? "guards" : mode == 1 ? "generate" : "verify";
    printf("c=%-14s op=%-8s format=%d+%d gbps=%.2f us_per_mib=%.2f\n", name, op, ds, ms,
           iters * (double) MIB / (t - t0) / 1e9, (t - t0) / iters * 1e6);
    free(buf);
}

int main(int argc, char **argv) {
    if (argc > 1) {
        seconds = atof(argv[1]);
    }
    if (argc > 2 && strcmp(argv[2], "cpu") == 0) {
        clock_id = CLOCK_THREAD_CPUTIME_ID;
    }
    pistore_crc64_init_tables();
    pistore_crc16_init_tables();
    static uint8_t src[MIB], dst[MIB];
    for (size_t i = 0; i < 4300; i++) {
        src[i] = (uint8_t) (rand() >> 7);
    }
    for (size_t n = 0; n <= 4200; n++) {
        for (size_t off = 0; off < 3; off++) {
            uint16_t seed = (uint16_t) (n * 40503u + off);
            uint16_t want = crc16_t10dif(seed, src + off, n);
            if (pistore_crc16_vpclmul(seed, src + off, n) != want || pistore_crc16_pclmul(seed, src + off, n) != want
                || pistore_crc16_table(seed, src + off, n) != want) {
                fprintf(stderr, "pistore CRC-16 differs from ISA-L at len %zu off %zu\n", n, off);
                return 1;
            }
        }
    }
    memset(src, 1, MIB);
    long iters = 0;
    double t0 = now(), t;
    do {
        for (int j = 0; j < 20; j++) {
            memcpy(dst, src, MIB);
            sink ^= dst[iters & 1023];
        }
        iters += 20;
        t = now();
    } while (t - t0 < seconds);
    printf("c=%-14s op=%-8s format=%s gbps=%.2f us_per_mib=%.2f\n", "memcpy", "copy", "1MiB",
           iters * (double) MIB / (t - t0) / 1e9, (t - t0) / iters * 1e6);

    int sizes[] = {512, 4096};
    for (int s = 0; s < 2; s++) {
        run("isal-crc16", k_crc16, sizes[s], 0, 2, 0);
        run("pistore-crc16", k_crc16ours, sizes[s], 0, 2, 0);
        run("pistore-crc16-128", k_crc16ours128, sizes[s], 0, 2, 0);
        run("isal-crc32c", k_crc32c, sizes[s], 0, 4, 0);
        run("isal-crc64ecma", k_crc64ecma, sizes[s], 0, 8, 0);
        run("pistore-crc64", k_crc64nvme, sizes[s], 0, 8, 0);
        run("pistore-crc64-128", k_crc64nvme128, sizes[s], 0, 8, 0);
    }
    for (int mode = 1; mode <= 2; mode++) {
        run("isal-crc16", k_crc16, 512, 8, 2, mode);
        run("isal-crc16", k_crc16, 4096, 8, 2, mode);
        run("pistore-crc16", k_crc16ours, 512, 8, 2, mode);
        run("pistore-crc16", k_crc16ours, 4096, 8, 2, mode);
        run("isal-crc64ecma", k_crc64ecma, 4096, 16, 8, mode);
        run("pistore-crc64", k_crc64nvme, 4096, 16, 8, mode);
    }
    return 0;
}
