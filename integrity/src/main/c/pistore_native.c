/*
 * JNI entry points of libpistore-native: guard kernels over one range, or over a run of whole
 * blocks (one call per run, never one per block). Every offset, length and count is checked in
 * Java (NativeGuards) before it gets here; this file trusts them.
 *
 * Algorithms (the `alg` argument, NativeGuards.ALG_*): 0 CRC-16/T10-DIF through ISA-L's
 * crc16_t10dif, 1 CRC-64/NVME with our own folding kernels (crc64nvme.c), 2 CRC-32C through
 * ISA-L's crc32_iscsi. ISA-L is opened with dlopen so the library loads (and CRC-64 works) on a
 * machine without libisal; the bit for a missing algorithm is simply absent from init0's answer.
 * States are raw registers, the same values the Java GuardAlgorithm implementations carry.
 */
#include <dlfcn.h>
#include <jni.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "crc64nvme_constants.h"
#include "pistore_native.h"

#define ALG_CRC16 0
#define ALG_CRC64 1
#define ALG_CRC32C 2

#define CAP_CRC16 1
#define CAP_CRC64 2
#define CAP_CRC32C 4
#define CAP_CRC64_VPCLMUL 8

typedef uint16_t (*crc16_fn)(uint16_t, const unsigned char *, uint64_t);
typedef unsigned int (*crc32_fn)(unsigned char *, int, unsigned int);
typedef uint64_t (*crc64_fn)(uint64_t, const uint8_t *, size_t);

static crc16_fn isal_crc16;
static crc32_fn isal_crc32c;
static crc64_fn crc64_kernel;
static int caps;
static char description[256];

static uint64_t update(int alg, uint64_t state, const uint8_t *p, size_t len) {
    switch (alg) {
    case ALG_CRC16:
        return isal_crc16((uint16_t) state, p, len);
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

JNIEXPORT jint JNICALL Java_io_pistore_integrity_internal_NativeGuards_init0(JNIEnv *env, jclass cls) {
    (void) env;
    (void) cls;
    if (caps) {
        return caps;
    }
    const char *c64 = "none";
    __builtin_cpu_init();
    pistore_crc64_init_tables();
    if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1")) {
        crc64_kernel = pistore_crc64_pclmul;
        caps |= CAP_CRC64;
        c64 = "pclmulqdq";
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")
            && __builtin_cpu_supports("vpclmulqdq")) {
            crc64_kernel = pistore_crc64_vpclmul;
            caps |= CAP_CRC64_VPCLMUL;
            c64 = "vpclmulqdq-avx512";
        }
    }
    const char *isal = "libisal not found";
    void *h = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        h = dlopen("libisal.so", RTLD_NOW | RTLD_LOCAL);
    }
    if (h) {
        isal_crc16 = (crc16_fn) dlsym(h, "crc16_t10dif");
        isal_crc32c = (crc32_fn) dlsym(h, "crc32_iscsi");
        if (isal_crc16) {
            caps |= CAP_CRC16;
        }
        if (isal_crc32c) {
            caps |= CAP_CRC32C;
        }
        isal = "libisal";
    }
    snprintf(description, sizeof description, "crc16=%s crc32c=%s crc64=%s",
             isal_crc16 ? "isal" : "unavailable", isal_crc32c ? "isal" : "unavailable", c64);
    if (!h) {
        snprintf(description + strlen(description), sizeof description - strlen(description), " (%s)", isal);
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

JNIEXPORT jlong JNICALL Java_io_pistore_integrity_internal_NativeGuards_updateDirect0(
    JNIEnv *env, jclass cls, jint alg, jlong state, jobject buf, jint off, jint len) {
    (void) cls;
    const uint8_t *p = (*env)->GetDirectBufferAddress(env, buf);
    if (!p) {
        return state;
    }
    return (jlong) update(alg, (uint64_t) state, p + off, (size_t) len);
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

/* Benchmark/diagnostic hook: the raw CRC-64 kernel over a heap copy, for the C harness. */
uint64_t pistore_crc64_nvme(uint64_t crc, const uint8_t *p, size_t len) {
    if (!crc64_kernel) {
        Java_io_pistore_integrity_internal_NativeGuards_init0(NULL, NULL);
    }
    return crc64_kernel ? crc64_kernel(crc, p, len) : pistore_crc64_table(crc, p, len);
}
