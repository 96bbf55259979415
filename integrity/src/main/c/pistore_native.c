/*
 * JNI entry points of libpistore-native: guard kernels over one range, or over a run of whole
 * blocks (one call per run, never one per block). Every offset, length and count is checked in
 * Java (NativeGuards) before it gets here; this file trusts them.
 *
 * Algorithms (the `alg` argument, NativeGuards.ALG_*): 0 CRC-16/T10-DIF and 1 CRC-64/NVME with our
 * own folding kernels (crc16t10dif.c, crc64nvme.c; PCLMULQDQ or VPCLMULQDQ chosen here by CPUID),
 * 2 CRC-32C through ISA-L's crc32_iscsi. Only libc is needed at run time: ISA-L is opened with
 * dlopen, for CRC-32C (opt-in on the Java side) and, on request (init0's OPT_CRC16_ISAL), as the
 * CRC-16 kernel for side-by-side measurement, and as the test oracle crc16Isal0. Built with
 * -DPISTORE_NO_ISAL the dlopen is gone altogether. States are raw registers, the same values the
 * Java GuardAlgorithm implementations carry.
 */
#ifndef PISTORE_NO_ISAL
#include <dlfcn.h>
#endif
#include <jni.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "crc16t10dif_constants.h"
#include "crc64nvme_constants.h"
#include "pistore_native.h"

#define ALG_CRC16 0
#define ALG_CRC64 1
#define ALG_CRC32C 2

#define CAP_CRC16 1
#define CAP_CRC64 2
#define CAP_CRC32C 4
#define CAP_CRC64_VPCLMUL 8
#define CAP_NO_PCLMUL 16
#define CAP_CRC16_ISAL 32

#define OPT_CRC16_ISAL 1
#define OPT_NO_VPCLMUL 2
#define OPT_NO_PCLMUL 4

typedef uint16_t (*crc16_fn)(uint16_t, const unsigned char *, uint64_t);
typedef unsigned int (*crc32_fn)(unsigned char *, int, unsigned int);
typedef uint64_t (*crc64_fn)(uint64_t, const uint8_t *, size_t);

static crc16_fn isal_crc16;
static crc32_fn isal_crc32c;
static crc64_fn crc16_kernel;
static crc64_fn crc64_kernel;
static int caps;
static char description[256];

static uint64_t update(int alg, uint64_t state, const uint8_t *p, size_t len) {
    switch (alg) {
    case ALG_CRC16:
        return crc16_kernel(state, p, len);
    case ALG_CRC64:
        return crc64_kernel(state, p, len);
    default:
        return isal_crc32c((unsigned char *) p, (int) len, (unsigned int) state);
    }
}

static void blocks(JNIEnv *env, int alg, uint64_t state, const uint8_t *base, jint stride, jint len, jint count,
                   jlongArray out) {
    jlong tmp[64];
    for (jint done = 0; done < count;) {
        jint n = count - done > 64 ? 64 : count - done;
        for (jint i = 0; i < n; i++) {
            tmp[i] = (jlong) update(alg, state, base + (size_t) (done + i) * (size_t) stride, (size_t) len);
        }
        (*env)->SetLongArrayRegion(env, out, done, n, tmp);
        done += n;
    }
}

static uint64_t isal_crc16_adapter(uint64_t crc, const uint8_t *p, size_t len);

/* Opens ISA-L if it is there; the reason it is not goes into why. */
static void open_isal(char *why, size_t n) {
#ifdef PISTORE_NO_ISAL
    snprintf(why, n, "built without ISA-L support");
#else
    void *h = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        h = dlopen("libisal.so", RTLD_NOW | RTLD_LOCAL);
    }
    if (!h) {
        const char *e = dlerror();
        snprintf(why, n, "libisal not loadable: %s", e ? e : "dlopen failed");
        return;
    }
    isal_crc16 = (crc16_fn) dlsym(h, "crc16_t10dif");
    isal_crc32c = (crc32_fn) dlsym(h, "crc32_iscsi");
    snprintf(why, n, "libisal without crc32_iscsi");
#endif
}

/*
 * Chooses the kernels once: CRC-16 and CRC-64 by CPUID (VPCLMULQDQ with AVX-512 BW/VL, else
 * PCLMULQDQ with SSSE3/SSE4.1, else none: the table alone is slower than the Java kernels), CRC-32C
 * from ISA-L when it loads. opts: OPT_CRC16_ISAL puts ISA-L's crc16_t10dif in place of ours;
 * OPT_NO_VPCLMUL / OPT_NO_PCLMUL choose as on a CPU without those instructions (pistore.native.kernel).
 */
JNIEXPORT jint JNICALL Java_io_pistore_integrity_internal_NativeGuards_init0(JNIEnv *env, jclass cls, jint opts) {
    (void) env;
    (void) cls;
    if (caps) {
        return caps;
    }
    const char *kernel = "none";
    __builtin_cpu_init();
    pistore_crc64_init_tables();
    pistore_crc16_init_tables();
    if (!(opts & OPT_NO_PCLMUL) && __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("ssse3")
        && __builtin_cpu_supports("sse4.1")) {
        crc16_kernel = pistore_crc16_pclmul;
        crc64_kernel = pistore_crc64_pclmul;
        caps |= CAP_CRC16 | CAP_CRC64;
        kernel = "pclmulqdq";
        if (!(opts & OPT_NO_VPCLMUL) && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")
            && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("vpclmulqdq")) {
            crc16_kernel = pistore_crc16_vpclmul;
            crc64_kernel = pistore_crc64_vpclmul;
            caps |= CAP_CRC64_VPCLMUL;
            kernel = "vpclmulqdq-avx512";
        }
    } else {
        caps |= CAP_NO_PCLMUL;
    }
    char isal_why[200] = "";
    open_isal(isal_why, sizeof isal_why);
    const char *c16 = kernel;
    if ((opts & OPT_CRC16_ISAL) && isal_crc16) {
        crc16_kernel = isal_crc16_adapter;
        caps |= CAP_CRC16 | CAP_CRC16_ISAL;
        c16 = "isal";
    }
    if (isal_crc32c) {
        caps |= CAP_CRC32C;
    }
    snprintf(description, sizeof description, "crc16=%s crc64=%s crc32c=%s", c16, kernel,
             isal_crc32c ? "isal" : "unavailable");
    if (!isal_crc32c) {
        snprintf(description + strlen(description), sizeof description - strlen(description), " (%s)", isal_why);
    }
    return caps;
}

JNIEXPORT jstring JNICALL Java_io_pistore_integrity_internal_NativeGuards_describe0(JNIEnv *env, jclass cls) {
    (void) cls;
    return (*env)->NewStringUTF(env, description);
}

JNIEXPORT jlongArray JNICALL Java_io_pistore_integrity_internal_NativeGuards_crc64Constants0(JNIEnv *env,
                                                                                           jclass cls) {
    (void) cls;
    jlong v[2 * 16 + 3];
    for (int m = 1; m <= 16; m++) {
        v[2 * (m - 1)] = (jlong) CRC64_FOLD[m][0];
        v[2 * (m - 1) + 1] = (jlong) CRC64_FOLD[m][1];
    }
    v[32] = (jlong) CRC64_K127;
    v[33] = (jlong) CRC64_MU;
    v[34] = (jlong) CRC64_POLY;
    jlongArray a = (*env)->NewLongArray(env, 35);
    if (a) {
        (*env)->SetLongArrayRegion(env, a, 0, 35, v);
    }
    return a;
}

/* The CRC-16/T10-DIF folding constants (gen_crc16_constants.c), for the test that re-derives them. */
JNIEXPORT jlongArray JNICALL Java_io_pistore_integrity_internal_NativeGuards_crc16Constants0(JNIEnv *env,
                                                                                           jclass cls) {
    (void) cls;
    jlong v[2 * 16 + 5];
    for (int m = 1; m <= 16; m++) {
        v[2 * (m - 1)] = (jlong) CRC16_FOLD[m][0];
        v[2 * (m - 1) + 1] = (jlong) CRC16_FOLD[m][1];
    }
    v[32] = (jlong) CRC16_K16;
    v[33] = (jlong) CRC16_K64;
    v[34] = (jlong) CRC16_K80;
    v[35] = (jlong) CRC16_MU;
    v[36] = (jlong) CRC16_POLY;
    jlongArray a = (*env)->NewLongArray(env, 37);
    if (a) {
        (*env)->SetLongArrayRegion(env, a, 0, 37, v);
    }
    return a;
}

/* Test oracle: ISA-L's crc16_t10dif over b[off, off + len), or -1 when ISA-L is not loaded. */
JNIEXPORT jlong JNICALL Java_io_pistore_integrity_internal_NativeGuards_crc16Isal0(
    JNIEnv *env, jclass cls, jint state, jbyteArray arr, jint off, jint len) {
    (void) cls;
    if (!isal_crc16) {
        return -1;
    }
    uint8_t *p = (*env)->GetPrimitiveArrayCritical(env, arr, NULL);
    if (!p) {
        return -1;
    }
    uint16_t r = isal_crc16((uint16_t) state, p + off, (uint64_t) len);
    (*env)->ReleasePrimitiveArrayCritical(env, arr, p, JNI_ABORT);
    return r;
}

JNIEXPORT jlong JNICALL Java_io_pistore_integrity_internal_NativeGuards_updateDirect0(
    JNIEnv *env, jclass cls, jint alg, jlong state, jobject buf, jint off, jint len) {
    (void) cls;
    const uint8_t *p = (*env)->GetDirectBufferAddress(env, buf);
    if (!p) {
        return state;
    }
    return (jlong) update(alg, (uint64_t) state, p + off, (size_t) len);
}

/* Primitive arguments only: no local reference, no GetDirectBufferAddress (the Java side read it). */
JNIEXPORT jlong JNICALL Java_io_pistore_integrity_internal_NativeGuards_updateAddress0(
    JNIEnv *env, jclass cls, jint alg, jlong state, jlong address, jint len) {
    (void) env;
    (void) cls;
    return (jlong) update(alg, (uint64_t) state, (const uint8_t *) (uintptr_t) address, (size_t) len);
}

JNIEXPORT jlong JNICALL Java_io_pistore_integrity_internal_NativeGuards_updateArray0(
    JNIEnv *env, jclass cls, jint alg, jlong state, jbyteArray arr, jint off, jint len) {
    (void) cls;
    uint8_t *p = (*env)->GetPrimitiveArrayCritical(env, arr, NULL);
    if (!p) {
        return state;
    }
    uint64_t r = update(alg, (uint64_t) state, p + off, (size_t) len);
    (*env)->ReleasePrimitiveArrayCritical(env, arr, p, JNI_ABORT);
    return (jlong) r;
}

JNIEXPORT void JNICALL Java_io_pistore_integrity_internal_NativeGuards_blocksDirect0(
    JNIEnv *env, jclass cls, jint alg, jlong state, jobject buf, jint off, jint stride, jint len, jint count,
    jlongArray out) {
    (void) cls;
    const uint8_t *p = (*env)->GetDirectBufferAddress(env, buf);
    if (!p) {
        return;
    }
    blocks(env, alg, (uint64_t) state, p + off, stride, len, count, out);
}

JNIEXPORT void JNICALL Java_io_pistore_integrity_internal_NativeGuards_blocksArray0(
    JNIEnv *env, jclass cls, jint alg, jlong state, jbyteArray arr, jint off, jint stride, jint len, jint count,
    jlongArray out) {
    (void) cls;
    jlong tmp[64];
    /* No JNI call may happen inside a critical region: compute in chunks of 64, store between. */
    for (jint done = 0; done < count;) {
        jint n = count - done > 64 ? 64 : count - done;
        uint8_t *p = (*env)->GetPrimitiveArrayCritical(env, arr, NULL);
        if (!p) {
            return;
        }
        const uint8_t *base = p + off;
        for (jint i = 0; i < n; i++) {
            tmp[i] = (jlong) update(alg, (uint64_t) state, base + (size_t) (done + i) * (size_t) stride, (size_t) len);
        }
        (*env)->ReleasePrimitiveArrayCritical(env, arr, p, JNI_ABORT);
        (*env)->SetLongArrayRegion(env, out, done, n, tmp);
        done += n;
    }
}

static uint64_t isal_crc16_adapter(uint64_t crc, const uint8_t *p, size_t len) {
    return isal_crc16((uint16_t) crc, p, len);
}

/* Benchmark/diagnostic hook: the raw CRC-64 kernel over a heap copy, for the C harness. */
uint64_t pistore_crc64_nvme(uint64_t crc, const uint8_t *p, size_t len) {
    if (!crc64_kernel) {
        Java_io_pistore_integrity_internal_NativeGuards_init0(NULL, NULL, 0);
    }
    return crc64_kernel ? crc64_kernel(crc, p, len) : pistore_crc64_table(crc, p, len);
}

/* The same for CRC-16/T10-DIF: the kernel init0 chose (ours), or the table without PCLMULQDQ. */
uint64_t pistore_crc16_t10dif(uint64_t crc, const uint8_t *p, size_t len) {
    if (!crc16_kernel) {
        Java_io_pistore_integrity_internal_NativeGuards_init0(NULL, NULL, 0);
    }
    return crc16_kernel ? crc16_kernel(crc, p, len) : pistore_crc16_table(crc, p, len);
}

/* ------------------------------------------------------------------------------------------------
 * Run-level PI: one call generates (guard + complete tuple) or verifies (escape, guard, app, ref)
 * a run of whole blocks. Layout of block k: data at d + k*dStride (dataLen bytes), metadata at
 * m + k*mStride; the guard covers the data and then the first `prefix` metadata bytes (PI last);
 * the tuple sits at metadata + tupleOff. Interleaved lists are the case m == d + dataLen with equal
 * strides, where data and prefix are one contiguous range. The tuple layout follows the algorithm
 * (GuardType): CRC-16 guard u16|app u16|ref u32; CRC-64 guard u64|app u16|ref u48; CRC-32C guard
 * u32|app u16|zero u16|ref u64; big-endian. Semantics are those of io.pistore.integrity.Pi.
 * ------------------------------------------------------------------------------------------------ */

#define OP_GENERATE 0
#define OP_VERIFY 1
#define F_GUARD 1
#define F_APP 2
#define F_REF 4
#define F_TYPE3 8
#define F_D_DIRECT 16
#define F_M_DIRECT 32

#define KIND_GUARD 0
#define KIND_APP 1
#define KIND_REF 2

static inline void st16(uint8_t *p, uint64_t v) {
    uint16_t x = __builtin_bswap16((uint16_t) v);
    memcpy(p, &x, 2);
}
static inline void st32(uint8_t *p, uint64_t v) {
    uint32_t x = __builtin_bswap32((uint32_t) v);
    memcpy(p, &x, 4);
}
static inline void st64(uint8_t *p, uint64_t v) {
    uint64_t x = __builtin_bswap64(v);
    memcpy(p, &x, 8);
}
static inline uint64_t ld16(const uint8_t *p) {
    uint16_t x;
    memcpy(&x, p, 2);
    return __builtin_bswap16(x);
}
static inline uint64_t ld32(const uint8_t *p) {
    uint32_t x;
    memcpy(&x, p, 4);
    return __builtin_bswap32(x);
}
static inline uint64_t ld64(const uint8_t *p) {
    uint64_t x;
    memcpy(&x, p, 8);
    return __builtin_bswap64(x);
}

static inline uint64_t finish(int alg, uint64_t s) {
    switch (alg) {
    case ALG_CRC16:
        return s & 0xFFFF;
    case ALG_CRC64:
        return ~s;
    default:
        return ~s & 0xFFFFFFFFu;
    }
}

struct pi_run {
    int alg;
    uint64_t s0;
    const uint8_t *d;
    size_t d_stride;
    uint8_t *m;
    size_t m_stride;
    int count;
    size_t data_len;
    size_t prefix;
    size_t tuple_off;
    int flags;
    uint64_t app;
    uint64_t app_mask;
    uint64_t ref0;
    uint64_t ref_mask;
};

static inline uint64_t run_guard(const struct pi_run *r, int k) {
    const uint8_t *blk = r->d + (size_t) k * r->d_stride;
    const uint8_t *md = r->m + (size_t) k * r->m_stride;
    uint64_t s;
    if (r->prefix && md == blk + r->data_len) {
        s = update(r->alg, r->s0, blk, r->data_len + r->prefix);
    } else {
        s = update(r->alg, r->s0, blk, r->data_len);
        if (r->prefix) {
            s = update(r->alg, s, md, r->prefix);
        }
    }
    return finish(r->alg, s);
}

static inline uint64_t run_ref(const struct pi_run *r, int k) {
    return (r->flags & F_TYPE3) ? r->ref0 : (r->ref0 + (uint64_t) k) & r->ref_mask;
}

static void generate_run(const struct pi_run *r) {
    for (int k = 0; k < r->count; k++) {
        uint64_t g = run_guard(r, k);
        uint64_t ref = run_ref(r, k);
        uint8_t *t = r->m + (size_t) k * r->m_stride + r->tuple_off;
        switch (r->alg) {
        case ALG_CRC16:
            st16(t, g);
            st16(t + 2, r->app);
            st32(t + 4, ref);
            break;
        case ALG_CRC64:
            st64(t, g);
            st16(t + 8, r->app);
            st16(t + 10, ref >> 32);
            st32(t + 12, ref);
            break;
        default:
            st32(t, g);
            st16(t + 4, r->app);
            st16(t + 6, 0);
            st64(t + 8, ref);
            break;
        }
    }
}

/* The index of the first bad block (res = kind, expected, actual), or count when all pass. */
static int verify_run(const struct pi_run *r, jlong res[3]) {
    for (int k = 0; k < r->count; k++) {
        const uint8_t *t = r->m + (size_t) k * r->m_stride + r->tuple_off;
        uint64_t stored, app, ref;
        switch (r->alg) {
        case ALG_CRC16:
            stored = ld16(t);
            app = ld16(t + 2);
            ref = ld32(t + 4);
            break;
        case ALG_CRC64:
            stored = ld64(t);
            app = ld16(t + 8);
            ref = (ld16(t + 10) << 32) | ld32(t + 12);
            break;
        default:
            stored = ld32(t);
            app = ld16(t + 4);
            ref = ld64(t + 8);
            break;
        }
        if (app == 0xFFFF && (!(r->flags & F_TYPE3) || ref == r->ref_mask)) {
            continue; /* escaped: no check at all */
        }
        if (r->flags & F_GUARD) {
            uint64_t g = run_guard(r, k);
            if (g != stored) {
                res[0] = KIND_GUARD;
                res[1] = (jlong) g;
                res[2] = (jlong) stored;
                return k;
            }
        }
        if ((r->flags & F_APP) && (app & r->app_mask) != (r->app & r->app_mask)) {
            res[0] = KIND_APP;
            res[1] = (jlong) (r->app & r->app_mask);
            res[2] = (jlong) (app & r->app_mask);
            return k;
        }
        if (r->flags & F_REF) {
            uint64_t want = run_ref(r, k);
            if (ref != want) {
                res[0] = KIND_REF;
                res[1] = (jlong) want;
                res[2] = (jlong) ref;
                return k;
            }
        }
    }
    return r->count;
}

/*
 * d and m are each a direct ByteBuffer (flag F_D_DIRECT / F_M_DIRECT) or a byte[]; offsets are
 * absolute (array offsets already added). Returns count for a generate, the verify answer for a
 * verify (result[0..2] filled when a block is bad), or -1 when a buffer address cannot be had.
 * Heap arrays are held with GetPrimitiveArrayCritical, and no JNI call is made while they are held.
 */
JNIEXPORT jint JNICALL Java_io_pistore_integrity_internal_NativeGuards_run0(
    JNIEnv *env, jclass cls, jint op, jint alg, jlong s0, jobject d, jint dOff, jint dStride, jobject m, jint mOff,
    jint mStride, jint count, jint dataLen, jint prefix, jint tupleOff, jint flags, jint app, jint appMask,
    jlong ref0, jlong refMask, jlongArray result) {
    (void) cls;
    int d_direct = (flags & F_D_DIRECT) != 0;
    int m_direct = (flags & F_M_DIRECT) != 0;
    int same = d_direct == m_direct && (*env)->IsSameObject(env, d, m);
    uint8_t *dp, *mp;
    if (d_direct) {
        dp = (*env)->GetDirectBufferAddress(env, d);
        if (!dp) {
            return -1;
        }
    }
    if (m_direct && !same) {
        mp = (*env)->GetDirectBufferAddress(env, m);
        if (!mp) {
            return -1;
        }
    }
    if (!d_direct) {
        dp = (*env)->GetPrimitiveArrayCritical(env, d, NULL);
        if (!dp) {
            return -1;
        }
    }
    if (same) {
        mp = dp;
    } else if (!m_direct) {
        mp = (*env)->GetPrimitiveArrayCritical(env, m, NULL);
        if (!mp) {
            if (!d_direct) {
                (*env)->ReleasePrimitiveArrayCritical(env, d, dp, JNI_ABORT);
            }
            return -1;
        }
    }
    struct pi_run r = {
        .alg = alg, .s0 = (uint64_t) s0,
        .d = dp + dOff, .d_stride = (size_t) dStride,
        .m = mp + mOff, .m_stride = (size_t) mStride,
        .count = count, .data_len = (size_t) dataLen, .prefix = (size_t) prefix, .tuple_off = (size_t) tupleOff,
        .flags = flags, .app = (uint64_t) app, .app_mask = (uint64_t) appMask,
        .ref0 = (uint64_t) ref0, .ref_mask = (uint64_t) refMask,
    };
    jlong res[3] = {0, 0, 0};
    jint ans;
    if (op == OP_GENERATE) {
        generate_run(&r);
        ans = count;
    } else {
        ans = verify_run(&r, res);
    }
    int wrote = op == OP_GENERATE;
    if (!m_direct && !same) {
        (*env)->ReleasePrimitiveArrayCritical(env, m, mp, wrote ? 0 : JNI_ABORT);
    }
    if (!d_direct) {
        (*env)->ReleasePrimitiveArrayCritical(env, d, dp, wrote && same ? 0 : JNI_ABORT);
    }
    if (op == OP_VERIFY && ans < count) {
        (*env)->SetLongArrayRegion(env, result, 0, 3, res);
    }
    return ans;
}
