/*
 * Copies a range of an iSCSI logical unit to another place of the same unit twice, and times each:
 * once with EXTENDED COPY (the unit copies; one command per 16 segments of at most 65535 blocks,
 * identification target descriptor from the unit's NAA designator), once as a host copies, READ(16)
 * then WRITE(16) of 1 MiB at a time, one command in flight. Then reads both copies back and compares
 * them with the source. Built and run by benchmarks/scripts/iscsi-xcopy.sh:
 *
 *   gcc -O2 -o iscsi_xcopy iscsi_xcopy.c -liscsi
 *   iscsi_xcopy URL MIB
 *
 * Prints "xcopy SECONDS MiB/s" and "read+write SECONDS MiB/s". Exit code 0, 2 on bad arguments, 3
 * when a command fails or a copy differs from its source.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

static struct iscsi_context *iscsi;
static int lun;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void fail(const char *what, struct scsi_task *t) {
    fprintf(stderr, "%s failed: %s\n", what, t == NULL ? iscsi_get_error(iscsi) : iscsi_get_error(iscsi));
    exit(3);
}

static void put16(unsigned char *p, uint32_t v) { p[0] = v >> 8; p[1] = v; }
static void put32(unsigned char *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }
static void put64(unsigned char *p, uint64_t v) { put32(p, v >> 32); put32(p + 4, (uint32_t) v); }

/* The unit's NAA designation descriptor: 4 bytes of header and 8 of designator. */
static void naa(unsigned char out[12]) {
    struct scsi_task *t = iscsi_inquiry_sync(iscsi, lun, 1, SCSI_INQUIRY_PAGECODE_DEVICE_IDENTIFICATION, 255);
    if (t == NULL || t->status != SCSI_STATUS_GOOD) {
        fail("INQUIRY 83h", t);
    }
    struct scsi_inquiry_device_identification *id = scsi_datain_unmarshall(t);
    for (struct scsi_inquiry_device_designator *d = id ? id->designators : NULL; d; d = d->next) {
        if (d->designator_type == SCSI_DESIGNATOR_TYPE_NAA && d->designator_length == 8) {
            memset(out, 0, 12);
            out[0] = d->code_set;
            out[1] = d->designator_type;
            out[3] = 8;
            memcpy(out + 4, d->designator, 8);
            scsi_free_scsi_task(t);
            return;
        }
    }
    fprintf(stderr, "no NAA designator\n");
    exit(3);
}

/* Copies blocks [src, src + n) to dst with EXTENDED COPY commands of at most 16 segments. */
static void xcopy(const unsigned char id[12], int bs, uint64_t src, uint64_t dst, uint64_t n) {
    while (n > 0) {
        unsigned char p[16 + 32 + 16 * 28];
        memset(p, 0, sizeof p);
        int segs = 0;
        unsigned char *s = p + 16 + 32;
        while (n > 0 && segs < 16) {
            uint32_t k = n > 65535 ? 65535 : (uint32_t) n;
            s[0] = 0x02;
            put16(s + 2, 0x18);
            put16(s + 10, k);
            put64(s + 12, src);
            put64(s + 20, dst);
            s += 28;
            segs++;
            src += k;
            dst += k;
            n -= k;
        }
        p[1] = 2 << 3; /* LIST ID USAGE 10b: no status kept */
        put16(p + 2, 32);
        put32(p + 8, 28 * segs);
        p[16] = 0xE4;
        memcpy(p + 16 + 4, id, 12);
        p[16 + 29] = bs >> 16;
        p[16 + 30] = bs >> 8;
        p[16 + 31] = bs;
        struct iscsi_data d = {16 + 32 + 28 * (size_t) segs, p};
        struct scsi_task *t = iscsi_extended_copy_sync(iscsi, lun, &d);
        if (t == NULL || t->status != SCSI_STATUS_GOOD) {
            fail("EXTENDED COPY", t);
        }
        scsi_free_scsi_task(t);
    }
}

static unsigned char *read_range(int bs, uint64_t lba, uint32_t bytes) {
    struct scsi_task *t = iscsi_read16_sync(iscsi, lun, lba, bytes, bs, 0, 0, 0, 0, 0);
    if (t == NULL || t->status != SCSI_STATUS_GOOD || t->datain.size != (int) bytes) {
        fail("READ(16)", t);
    }
    unsigned char *b = malloc(bytes);
    memcpy(b, t->datain.data, bytes);
    scsi_free_scsi_task(t);
    return b;
}

static void write_range(int bs, uint64_t lba, unsigned char *b, uint32_t bytes) {
    struct scsi_task *t = iscsi_write16_sync(iscsi, lun, lba, b, bytes, bs, 0, 0, 0, 0, 0);
    if (t == NULL || t->status != SCSI_STATUS_GOOD) {
        fail("WRITE(16)", t);
    }
    scsi_free_scsi_task(t);
}

int main(int argc, char **argv) {
    if (argc != 3 || atoi(argv[2]) <= 0) {
        fprintf(stderr, "usage: iscsi_xcopy URL MIB\n");
        return 2;
    }
    iscsi = iscsi_create_context("iqn.2026-12.io.pistore:xcopy");
    struct iscsi_url *url = iscsi_parse_full_url(iscsi, argv[1]);
    if (url == NULL) {
        fprintf(stderr, "bad URL: %s\n", iscsi_get_error(iscsi));
        return 2;
    }
    iscsi_set_targetname(iscsi, url->target);
    iscsi_set_session_type(iscsi, ISCSI_SESSION_NORMAL);
    iscsi_set_header_digest(iscsi, ISCSI_HEADER_DIGEST_NONE);
    lun = url->lun;
    if (iscsi_full_connect_sync(iscsi, url->portal, lun) != 0) {
        fprintf(stderr, "login failed: %s\n", iscsi_get_error(iscsi));
        return 3;
    }
    struct scsi_task *t = iscsi_readcapacity16_sync(iscsi, lun);
    struct scsi_readcapacity16 *rc = t ? scsi_datain_unmarshall(t) : NULL;
    if (rc == NULL) {
        fail("READ CAPACITY(16)", t);
    }
    int bs = rc->block_length;
    uint64_t blocks = rc->returned_lba + 1;
    uint64_t n = (uint64_t) atoi(argv[2]) * 1048576 / bs;
    if (3 * n > blocks) {
        fprintf(stderr, "the unit has %llu blocks, fewer than three times %llu\n", (unsigned long long) blocks,
                (unsigned long long) n);
        return 2;
    }
    uint32_t chunk = 1048576;
    uint64_t per = chunk / bs;
    unsigned char *fill = malloc(chunk);
    for (uint64_t at = 0; at < n; at += per) { /* the source: blocks [0, n) of known bytes */
        for (uint32_t i = 0; i < chunk; i++) {
            fill[i] = (unsigned char) (at * 131 + i * 7);
        }
        write_range(bs, at, fill, chunk);
    }
    double t0 = now();
    unsigned char id[12];
    naa(id);
    xcopy(id, bs, 0, n, n);
    double t1 = now();
    for (uint64_t at = 0; at < n; at += per) {
        unsigned char *b = read_range(bs, at, chunk);
        write_range(bs, 2 * n + at, b, chunk);
        free(b);
    }
    double t2 = now();
    for (uint64_t at = 0; at < n; at += per) {
        unsigned char *a = read_range(bs, at, chunk);
        unsigned char *x = read_range(bs, n + at, chunk);
        unsigned char *h = read_range(bs, 2 * n + at, chunk);
        if (memcmp(a, x, chunk) != 0 || memcmp(a, h, chunk) != 0) {
            fprintf(stderr, "a copy differs from its source at block %llu\n", (unsigned long long) at);
            return 3;
        }
        free(a);
        free(x);
        free(h);
    }
    double mib = (double) n * bs / 1048576;
    printf("xcopy %.3f s %.1f MiB/s\n", t1 - t0, mib / (t1 - t0));
    printf("read+write %.3f s %.1f MiB/s\n", t2 - t1, mib / (t2 - t1));
    iscsi_logout_sync(iscsi);
    iscsi_destroy_context(iscsi);
    return 0;
}
