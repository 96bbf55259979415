/*
 * A small load generator for an iSCSI logical unit through libiscsi's asynchronous C API: READ(16)
 * or WRITE(16) of a fixed size, random or sequential, with a fixed number of commands in flight, for
 * a number of seconds, with RDPROTECT/WRPROTECT 0-5. With a protect field the 8-byte T10 tuple of
 * each block travels after it (CRC-16 guard, application tag 0, reference tag the LBA's low 32 bits,
 * as Type 1 asks). Built by benchmarks/scripts/iscsi-vs-tgt.sh:
 *
 *   gcc -O2 -o iscsi_bench iscsi_bench.c -liscsi
 *   iscsi_bench URL read|write rand|seq BYTES QD SECONDS [PROTECT [SPAN_BYTES]]
 *
 * Prints one line: "requests IOPS MiB/s errors". Exit code 0, or 2 on bad arguments, 3 when the
 * login or a command fails. With ISCSI_BENCH_R2T=1 in the environment it asks for ImmediateData=No
 * and InitialR2T=Yes: every write's data then follows in Data-Out PDUs, each burst solicited by an R2T.
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

struct slot {
    unsigned char *buf;
    uint64_t lba;
};

static struct iscsi_context *iscsi;
static int lun, bs, blocks, wire, write_mode, random_mode, protect, qd;
static uint64_t span_blocks, next_seq;
static double deadline;
static long long done, errors, in_flight;
static uint64_t rng = 88172645463325252ull;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static uint64_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint16_t crc16_t10dif(const unsigned char *p, size_t n) {
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t) p[i] << 8;
        for (int b = 0; b < 8; b++) {
            crc = (crc & 0x8000) ? (uint16_t) ((crc << 1) ^ 0x8BB7) : (uint16_t) (crc << 1);
        }
    }
    return crc;
}

static void put32(unsigned char *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }

static void submit(struct slot *s);

static void completed(struct iscsi_context *ctx, int status, void *command_data, void *private_data) {
    struct slot *s = private_data;
    struct scsi_task *t = command_data;
    (void) ctx;
    if (status != SCSI_STATUS_GOOD) {
        if (errors++ < 3) {
            fprintf(stderr, "iscsi_bench: command at LBA %llu: status %d %s\n", (unsigned long long) s->lba, status,
                    iscsi_get_error(iscsi));
        }
    }
    if (t != NULL) {
        scsi_free_scsi_task(t);
    }
    in_flight--;
    done++;
    if (now() < deadline) {
        submit(s);
    }
}

static void submit(struct slot *s) {
    uint64_t lba;
    if (random_mode) {
        lba = (next_random() % (span_blocks / blocks)) * blocks;
    } else {
        lba = next_seq;
        next_seq = (next_seq + blocks) % (span_blocks - span_blocks % blocks);
    }
    s->lba = lba;
    struct scsi_task *t;
    if (write_mode) {
        if (protect) {
            for (int i = 0; i < blocks; i++) {
                put32(s->buf + (size_t) i * wire + bs + 4, (uint32_t) (lba + i)); /* the guard stays right */
            }
        }
        t = iscsi_write16_task(iscsi, lun, lba, s->buf, (uint32_t) blocks * wire, wire, protect, 0, 0, 0, 0,
                               completed, s);
    } else {
        t = iscsi_read16_task(iscsi, lun, lba, (uint32_t) blocks * wire, wire, protect, 0, 0, 0, 0, completed, s);
    }
    if (t == NULL) {
        fprintf(stderr, "iscsi_bench: cannot queue a command: %s\n", iscsi_get_error(iscsi));
        exit(3);
    }
    in_flight++;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: iscsi_bench URL read|write rand|seq BYTES QD SECONDS [PROTECT [SPAN_BYTES]]\n");
        return 2;
    }
    write_mode = strcmp(argv[2], "write") == 0;
    random_mode = strcmp(argv[3], "rand") == 0;
    long bytes = atol(argv[4]);
    qd = atoi(argv[5]);
    double secs = atof(argv[6]);
    protect = argc > 7 ? atoi(argv[7]) : 0;
    long long span = argc > 8 ? atoll(argv[8]) : 0;
    iscsi = iscsi_create_context("iqn.2026-12.io.pistore:iscsi-bench");
    struct iscsi_url *url = iscsi_parse_full_url(iscsi, argv[1]);
    if (url == NULL) {
        fprintf(stderr, "iscsi_bench: bad URL: %s\n", iscsi_get_error(iscsi));
        return 2;
    }
    iscsi_set_targetname(iscsi, url->target);
    if (url->user[0]) {
        iscsi_set_initiator_username_pwd(iscsi, url->user, url->passwd);
    }
    iscsi_set_session_type(iscsi, ISCSI_SESSION_NORMAL);
    iscsi_set_header_digest(iscsi, ISCSI_HEADER_DIGEST_NONE);
    const char *r2t = getenv("ISCSI_BENCH_R2T");
    if (r2t != NULL && strcmp(r2t, "1") == 0) {
        iscsi_set_immediate_data(iscsi, ISCSI_IMMEDIATE_DATA_NO);
        iscsi_set_initial_r2t(iscsi, ISCSI_INITIAL_R2T_YES);
    }
    lun = url->lun;
    if (iscsi_full_connect_sync(iscsi, url->portal, lun) != 0) {
        fprintf(stderr, "iscsi_bench: login failed: %s\n", iscsi_get_error(iscsi));
        return 3;
    }
    struct scsi_task *cap = iscsi_readcapacity16_sync(iscsi, lun);
    struct scsi_readcapacity16 *rc = cap ? scsi_datain_unmarshall(cap) : NULL;
    if (rc == NULL) {
        fprintf(stderr, "iscsi_bench: READ CAPACITY(16) failed: %s\n", iscsi_get_error(iscsi));
        return 3;
    }
    bs = rc->block_length;
    uint64_t capacity = rc->returned_lba + 1;
    if (protect && !rc->prot_en) {
        fprintf(stderr, "iscsi_bench: the unit has no PI (PROT_EN 0); protect %d is refused\n", protect);
        return 2;
    }
    blocks = (int) (bytes / bs);
    if (blocks < 1 || qd < 1 || secs <= 0 || protect < 0 || protect > 5) {
        fprintf(stderr, "iscsi_bench: bad size, queue depth, seconds or protect\n");
        return 2;
    }
    wire = bs + (protect ? 8 : 0);
    span_blocks = span > 0 && (uint64_t) span / bs < capacity ? (uint64_t) span / bs : capacity;
    struct slot *slots = calloc(qd, sizeof *slots);
    for (int i = 0; i < qd; i++) {
        slots[i].buf = malloc((size_t) blocks * wire);
        for (size_t j = 0; j < (size_t) blocks * wire; j++) {
            slots[i].buf[j] = (unsigned char) next_random();
        }
        if (protect) {
            for (int b = 0; b < blocks; b++) {
                unsigned char *d = slots[i].buf + (size_t) b * wire;
                uint16_t g = crc16_t10dif(d, bs);
                d[bs] = g >> 8;
                d[bs + 1] = g;
                d[bs + 2] = 0;
                d[bs + 3] = 0;
            }
        }
    }
    double start = now();
    deadline = start + secs;
    for (int i = 0; i < qd; i++) {
        submit(&slots[i]);
    }
    while (in_flight > 0) {
        struct pollfd pfd = {iscsi_get_fd(iscsi), iscsi_which_events(iscsi), 0};
        if (poll(&pfd, 1, 1000) < 0) {
            perror("poll");
            return 3;
        }
        if (iscsi_service(iscsi, pfd.revents) < 0) {
            fprintf(stderr, "iscsi_bench: %s\n", iscsi_get_error(iscsi));
            return 3;
        }
    }
    double elapsed = now() - start;
    printf("%lld %.0f %.1f %lld\n", done, done / elapsed, done * (double) blocks * bs / elapsed / 1048576.0, errors);
    iscsi_logout_sync(iscsi);
    iscsi_destroy_context(iscsi);
    return errors > 0 ? 3 : 0;
}
