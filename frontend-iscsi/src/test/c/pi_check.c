/*
 * Positive and negative T10 PI checks against an iSCSI logical unit through libiscsi's C API,
 * which libiscsi's own suite lacks: every WRPROTECT and RDPROTECT value, correct PI stored and read
 * back byte for byte, wrong guard or reference tag refused with the sense SBC-3 names and nothing
 * stored; COMPARE AND WRITE and VERIFY(16) BYTCHK 1 with PI. Usage: pi_check iscsi://HOST:PORT/IQN/0 TYPE (1 or 3; the unit's PI type).
 * Prints one PASS or FAIL line per check; the exit code is the number of failures.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

static int failures;
static struct iscsi_context *iscsi;
static int lun;
static int bs;  /* logical block size */
static int type;

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

static void put16(unsigned char *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static void put32(unsigned char *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }

/* blocks of random data, each followed by its correct 8-byte tuple */
static unsigned char *protected_blocks(uint64_t lba, int n, uint16_t app, unsigned seed) {
    unsigned char *b = malloc((size_t) n * (bs + 8));
    srand(seed);
    for (int i = 0; i < n; i++) {
        unsigned char *d = b + (size_t) i * (bs + 8);
        for (int j = 0; j < bs; j++) d[j] = rand();
        put16(d + bs, crc16_t10dif(d, bs));
        put16(d + bs + 2, app);
        put32(d + bs + 4, type == 3 ? 0x5a5a0000u + i : (uint32_t) (lba + i));
    }
    return b;
}

static void result(int ok, const char *name, const char *why) {
    printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name, ok ? "" : ": ", ok ? "" : why);
    if (!ok) failures++;
}

/* status, sense key, ASC/ASCQ and INFORMATION (fixed format, -1 when not valid) of a task */
static void sense_of(struct scsi_task *t, int *key, int *ascq, long long *info) {
    *key = t->sense.key;
    *ascq = t->sense.ascq;
    *info = -1;
    if (t->status == SCSI_STATUS_CHECK_CONDITION && t->datain.size >= 2 + 7) {
        unsigned char *s = t->datain.data + 2;
        if ((s[0] & 0x7f) == 0x70 && (s[0] & 0x80))
            *info = ((long long) s[3] << 24) | (s[4] << 16) | (s[5] << 8) | s[6];
    }
}

static struct scsi_task *wr(uint64_t lba, unsigned char *d, int n, int wp) {
    return iscsi_write16_sync(iscsi, lun, lba, d, n * (bs + (wp ? 8 : 0)), bs + (wp ? 8 : 0), wp, 0, 0, 0, 0);
}

static struct scsi_task *rd(uint64_t lba, int n, int rp) {
    return iscsi_read16_sync(iscsi, lun, lba, n * (bs + (rp ? 8 : 0)), bs + (rp ? 8 : 0), rp, 0, 0, 0, 0);
}

static int good(struct scsi_task *t) { return t != NULL && t->status == SCSI_STATUS_GOOD; }

/* a write with PI that must fail with ABORTED COMMAND 10h/ascq at bad_lba and leave the blocks as they were */
static void refused(const char *name, uint64_t lba, unsigned char *d, int n, int wp, int ascq, uint64_t bad_lba) {
    char why[256];
    struct scsi_task *before = rd(lba, n, 0);
    struct scsi_task *t = wr(lba, d, n, wp);
    int key, aq; long long info;
    if (t == NULL) { result(0, name, iscsi_get_error(iscsi)); return; }
    sense_of(t, &key, &aq, &info);
    struct scsi_task *after = rd(lba, n, 0);
    int same = good(before) && good(after) && memcmp(before->datain.data, after->datain.data, (size_t) n * bs) == 0;
    snprintf(why, sizeof why, "status %d key 0x%x ascq 0x%04x info %lld (want 0x0b 0x%04x %llu), unchanged %d",
             t->status, key, aq, info, ascq, (unsigned long long) bad_lba, same);
    result(t->status == SCSI_STATUS_CHECK_CONDITION && key == 0x0b && aq == ascq
           && info == (long long) bad_lba && same, name, why);
    scsi_free_scsi_task(t);
    if (before) scsi_free_scsi_task(before);
    if (after) scsi_free_scsi_task(after);
}

int main(int argc, char **argv) {
    char name[128], why[256];
    if (argc != 3) { fprintf(stderr, "usage: pi_check URL TYPE\n"); return 100; }
    type = atoi(argv[2]);
    struct iscsi_url *url;
    iscsi = iscsi_create_context("iqn.2026-12.io.pistore:pi-check");
    url = iscsi_parse_full_url(iscsi, argv[1]);
    if (url == NULL) { fprintf(stderr, "bad URL: %s\n", iscsi_get_error(iscsi)); return 100; }
    iscsi_set_targetname(iscsi, url->target);
    if (url->user[0])
        iscsi_set_initiator_username_pwd(iscsi, url->user, url->passwd);
    if (getenv("PI_CHECK_TARGET_USER") && getenv("PI_CHECK_TARGET_SECRET"))
        iscsi_set_target_username_pwd(iscsi, getenv("PI_CHECK_TARGET_USER"), getenv("PI_CHECK_TARGET_SECRET"));
    iscsi_set_session_type(iscsi, ISCSI_SESSION_NORMAL);
    iscsi_set_header_digest(iscsi, ISCSI_HEADER_DIGEST_CRC32C);
    lun = url->lun;
    if (iscsi_full_connect_sync(iscsi, url->portal, lun) != 0) {
        fprintf(stderr, "login failed: %s\n", iscsi_get_error(iscsi));
        return 100;
    }
    struct scsi_task *cap = iscsi_readcapacity16_sync(iscsi, lun);
    struct scsi_readcapacity16 *rc = cap ? scsi_datain_unmarshall(cap) : NULL;
    if (rc == NULL) { fprintf(stderr, "READ CAPACITY(16) failed\n"); return 100; }
    bs = rc->block_length;
    snprintf(why, sizeof why, "prot_en %d p_type %d", rc->prot_en, rc->p_type);
    result(rc->prot_en == 1 && rc->p_type == type - 1, "read capacity 16 shows the protection type", why);

    /* every WRPROTECT value with correct PI, read back with every RDPROTECT value */
    for (int wp = 1; wp <= 5; wp++) {
        uint64_t lba = 16 * wp;
        unsigned char *d = protected_blocks(lba, 4, 0x1200 + wp, 100 + wp);
        struct scsi_task *t = wr(lba, d, 4, wp);
        snprintf(name, sizeof name, "WRPROTECT %d with correct PI is stored", wp);
        result(good(t), name, t ? iscsi_get_error(iscsi) : "no task");
        for (int rp = 0; rp <= 5; rp++) {
            struct scsi_task *r = rd(lba, 4, rp);
            int ok = good(r);
            if (ok && rp == 0) {
                for (int i = 0; i < 4 && ok; i++)
                    ok = memcmp(r->datain.data + (size_t) i * bs, d + (size_t) i * (bs + 8), bs) == 0;
            } else if (ok) {
                ok = r->datain.size == 4 * (bs + 8) && memcmp(r->datain.data, d, (size_t) 4 * (bs + 8)) == 0;
            }
            snprintf(name, sizeof name, "WRPROTECT %d then RDPROTECT %d returns the same %s", wp, rp,
                     rp ? "data and PI" : "data");
            result(ok, name, r ? (r->status ? "bad status" : "different bytes") : iscsi_get_error(iscsi));
            if (r) scsi_free_scsi_task(r);
        }
        if (t) scsi_free_scsi_task(t);
        free(d);
    }

    /* WRPROTECT 0: the target generates PI, which RDPROTECT 1 returns */
    {
        uint64_t lba = 200;
        unsigned char *d = protected_blocks(lba, 2, 0, 7);
        unsigned char plain[2 * 4096];
        for (int i = 0; i < 2; i++) memcpy(plain + (size_t) i * bs, d + (size_t) i * (bs + 8), bs);
        struct scsi_task *t = wr(lba, plain, 2, 0);
        struct scsi_task *r = rd(lba, 2, 1);
        int ok = good(t) && good(r);
        for (int i = 0; i < 2 && ok; i++) {
            unsigned char *g = r->datain.data + (size_t) i * (bs + 8);
            ok = memcmp(g, plain + (size_t) i * bs, bs) == 0 && memcmp(g + bs, d + (size_t) i * (bs + 8) + bs, 2) == 0;
            if (type == 1) ok = ok && memcmp(g + bs + 4, d + (size_t) i * (bs + 8) + bs + 4, 4) == 0;
        }
        result(ok, "WRPROTECT 0 has the target generate the guard and reference tag", "PI read back differs");
        if (t) scsi_free_scsi_task(t);
        if (r) scsi_free_scsi_task(r);
        free(d);
    }

    /* wrong guard in the second block: refused where the guard is checked */
    int guard_checked[] = {1, 4, 5};
    for (int k = 0; k < 3; k++) {
        uint64_t lba = 300 + 8 * k;
        unsigned char *d = protected_blocks(lba, 3, 0, 20 + k);
        d[(bs + 8) + bs] ^= 0x01;
        snprintf(name, sizeof name, "WRPROTECT %d with a wrong guard is refused (10h/01h) and stores nothing",
                 guard_checked[k]);
        refused(name, lba, d, 3, guard_checked[k], 0x1001, lba + 1);
        free(d);
    }
    /* wrong reference tag in the third block (Type 1 only: Type 3 has no reference tag to check) */
    if (type == 1) {
        int ref_checked[] = {1, 2, 5};
        for (int k = 0; k < 3; k++) {
            uint64_t lba = 400 + 8 * k;
            unsigned char *d = protected_blocks(lba, 3, 0, 30 + k);
            d[2 * (bs + 8) + bs + 7] ^= 0x40;
            snprintf(name, sizeof name, "WRPROTECT %d with a wrong reference tag is refused (10h/03h) and stores nothing",
                     ref_checked[k]);
            refused(name, lba, d, 3, ref_checked[k], 0x1003, lba + 2);
            free(d);
        }
    }
    /* 64 KiB of blocks with PI (a write large enough to be split into the target's pooled buffer):
       stored and read back whole; then the same blocks with a wrong guard near the end are refused at
       that block's LBA and the first write stays */
    {
        uint64_t lba = 1024;
        int n = 65536 / bs;
        unsigned char *d = protected_blocks(lba, n, 0x0707, 60);
        struct scsi_task *t = wr(lba, d, n, 1);
        struct scsi_task *r = rd(lba, n, 1);
        result(good(t) && good(r) && r->datain.size == n * (bs + 8)
               && memcmp(r->datain.data, d, (size_t) n * (bs + 8)) == 0,
               "a 64 KiB WRPROTECT 1 write is stored and read back with its PI", "differs");
        unsigned char *e = protected_blocks(lba, n, 0x0707, 61);
        e[(size_t) (n - 3) * (bs + 8) + bs + 1] ^= 0x10;
        refused("a 64 KiB WRPROTECT 1 write with a wrong guard near its end is refused (10h/01h) and stores nothing",
                lba, e, n, 1, 0x1001, lba + n - 3);
        struct scsi_task *again = rd(lba, n, 1);
        result(good(again) && memcmp(again->datain.data, d, (size_t) n * (bs + 8)) == 0,
               "after it the blocks and PI of the first write read back", "differs");
        if (t) scsi_free_scsi_task(t);
        if (r) scsi_free_scsi_task(r);
        if (again) scsi_free_scsi_task(again);
        free(d);
        free(e);
    }
    /* WRPROTECT 3 checks nothing: a bad guard is stored, then RDPROTECT 0 and 1 (check) refuse it and 3 returns it */
    {
        uint64_t lba = 500;
        unsigned char *d = protected_blocks(lba, 1, 0, 40);
        d[bs] ^= 0xff;
        struct scsi_task *t = wr(lba, d, 1, 3);
        result(good(t), "WRPROTECT 3 stores a block whose guard is wrong", "refused");
        struct scsi_task *r0 = rd(lba, 1, 0);
        int key, aq; long long info;
        if (r0) sense_of(r0, &key, &aq, &info);
        snprintf(why, sizeof why, "status %d", r0 ? r0->status : -1);
        result(r0 && r0->status == SCSI_STATUS_CHECK_CONDITION && key == 0x0b
               && aq == 0x1001 && info == (long long) lba,
               "RDPROTECT 0 of that block fails its guard check (10h/01h) at its LBA", why);
        struct scsi_task *r1 = rd(lba, 1, 1);
        if (r1) sense_of(r1, &key, &aq, &info);
        snprintf(why, sizeof why, "status %d", r1 ? r1->status : -1);
        result(r1 && r1->status == SCSI_STATUS_CHECK_CONDITION && key == 0x0b
               && aq == 0x1001 && info == (long long) lba,
               "RDPROTECT 1 of that block fails its guard check (10h/01h) at its LBA", why);
        if (r1) scsi_free_scsi_task(r1);
        struct scsi_task *r3 = rd(lba, 1, 3);
        result(good(r3) && memcmp(r3->datain.data, d, bs + 8) == 0, "RDPROTECT 3 returns it unchecked", "differs");
        struct scsi_task *r2 = rd(lba, 1, 2);
        result(good(r2), "RDPROTECT 2 (no guard check) returns it", "refused");
        if (t) scsi_free_scsi_task(t);
        if (r0) scsi_free_scsi_task(r0);
        if (r3) scsi_free_scsi_task(r3);
        if (r2) scsi_free_scsi_task(r2);
        free(d);
    }
    /* COMPARE AND WRITE with WRPROTECT 1 (both instances with their tuples) stores the write instance
       with its PI; VERIFY(16) with BYTCHK 1 and VRPROTECT 1 compares blocks and tuples: equal ones
       pass, an application tag that differs is a MISCOMPARE 10h/02h at its LBA */
    {
        uint64_t lba = 700;
        size_t half = (size_t) 2 * (bs + 8);
        unsigned char *old = protected_blocks(lba, 2, 0x0101, 70);
        unsigned char *fresh = protected_blocks(lba, 2, 0x0202, 71);
        unsigned char *both = malloc(2 * half);
        memcpy(both, old, half);
        memcpy(both + half, fresh, half);
        struct scsi_task *w = wr(lba, old, 2, 1);
        struct scsi_task *c = iscsi_compareandwrite_sync(iscsi, lun, lba, both, 2 * half, bs + 8, 1, 0, 0, 0, 0);
        struct scsi_task *r = rd(lba, 2, 3);
        result(good(w) && good(c) && good(r) && memcmp(r->datain.data, fresh, half) == 0,
               "COMPARE AND WRITE with WRPROTECT 1 stores the write instance and its PI",
               c && c->status ? "refused" : "different bytes");
        struct scsi_task *v = iscsi_verify16_sync(iscsi, lun, fresh, half, lba, 1, 0, 1, bs + 8);
        result(good(v), "VERIFY(16) with BYTCHK 1 and VRPROTECT 1 of the same blocks and PI passes", "refused");
        fresh[(bs + 8) + bs + 3] ^= 0x01;
        struct scsi_task *m = iscsi_verify16_sync(iscsi, lun, fresh, half, lba, 1, 0, 1, bs + 8);
        int key = 0, aq = 0; long long info = -1;
        if (m) sense_of(m, &key, &aq, &info);
        snprintf(why, sizeof why, "status %d key %d ascq %04x info %lld", m ? m->status : -1, key, aq, info);
        result(m && m->status == SCSI_STATUS_CHECK_CONDITION && key == SCSI_SENSE_MISCOMPARE && aq == 0x1002
               && info == (long long) lba + 1, "a differing application tag is a MISCOMPARE (10h/02h) at its LBA", why);
        if (w) scsi_free_scsi_task(w);
        if (c) scsi_free_scsi_task(c);
        if (r) scsi_free_scsi_task(r);
        if (v) scsi_free_scsi_task(v);
        if (m) scsi_free_scsi_task(m);
        free(old);
        free(fresh);
        free(both);
    }
    /* reserved protect values */
    {
        unsigned char *d = protected_blocks(600, 1, 0, 50);
        struct scsi_task *t = wr(600, d, 1, 6);
        int key, aq; long long info;
        if (t) sense_of(t, &key, &aq, &info);
        result(t && t->status == SCSI_STATUS_CHECK_CONDITION && key == SCSI_SENSE_ILLEGAL_REQUEST
               && aq == SCSI_SENSE_ASCQ_INVALID_FIELD_IN_CDB, "WRPROTECT 6 is an invalid field in the CDB", "accepted");
        if (t) scsi_free_scsi_task(t);
        free(d);
    }
    iscsi_logout_sync(iscsi);
    iscsi_destroy_context(iscsi);
    printf("%d failure(s)\n", failures);
    return failures;
}
