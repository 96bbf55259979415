#!/usr/bin/env bash
# Builds libpistore-native.so into $1 (the module's classes directory) for Linux x86-64.
# Called by Maven (exec-maven-plugin, phase process-classes). Exits 0 with a message, building
# nothing, when the toolchain is missing: the pure-Java path then stays the only one.
set -u
out_root="${1:?usage: build.sh OUTPUT_CLASSES_DIR}"
here="$(cd "$(dirname "$0")" && pwd)"
dest="$out_root/META-INF/native/linux-x86_64"

skip() {
    echo "[pistore-native] not built: $*; the pure-Java guard path will be used"
    exit 0
}

[ "${PISTORE_NATIVE_BUILD:-1}" = "0" ] && skip "PISTORE_NATIVE_BUILD=0"
[ "$(uname -s)" = "Linux" ] || skip "not Linux"
case "$(uname -m)" in x86_64|amd64) ;; *) skip "not x86-64 ($(uname -m))" ;; esac
cc="${CC:-gcc}"
command -v "$cc" >/dev/null 2>&1 || skip "no C compiler ($cc)"

java_home="${JAVA_HOME:-}"
if [ -z "$java_home" ] || [ ! -f "$java_home/include/jni.h" ]; then
    if command -v java >/dev/null 2>&1; then
        java_home="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.home = //p')"
    fi
fi
[ -n "$java_home" ] && [ -f "$java_home/include/jni.h" ] || skip "no JNI headers (jni.h) under JAVA_HOME=$java_home"

# ISA-L is never linked: the library opens libisal.so.2 with dlopen when it is there (CRC-32C, and
# CRC-16 only on request). PISTORE_NATIVE_ISAL=0 compiles the dlopen out, for a library that cannot
# reach ISA-L at all (docs/NATIVE.md, "libisal hidden").
isal_flags=""
libs="-ldl"
if [ "${PISTORE_NATIVE_ISAL:-1}" = "0" ]; then
    isal_flags="-DPISTORE_NO_ISAL"
    libs=""
    echo "[pistore-native] PISTORE_NATIVE_ISAL=0: built without the ISA-L dlopen"
fi

mkdir -p "$dest" || skip "cannot create $dest"
tmp="$dest/libpistore-native.so.tmp"
if "$cc" -O3 -std=gnu11 -Wall -Wextra -fPIC -shared -fvisibility=default \
    -I"$java_home/include" -I"$java_home/include/linux" \
    $isal_flags -o "$tmp" "$here/pistore_native.c" "$here/crc16t10dif.c" "$here/crc64nvme.c" $libs; then
    mv -f "$tmp" "$dest/libpistore-native.so"
    echo "[pistore-native] built $dest/libpistore-native.so"
    # A twin without the ISA-L dlopen, outside the jar, for the test that proves the CRC-16 path is
    # native where libisal cannot be loaded (Crc16WithoutIsalTest).
    twin="$out_root/../native-no-isal"
    mkdir -p "$twin" && "$cc" -O3 -std=gnu11 -Wall -Wextra -fPIC -shared -fvisibility=default -DPISTORE_NO_ISAL \
        -I"$java_home/include" -I"$java_home/include/linux" \
        -o "$twin/libpistore-native.so" "$here/pistore_native.c" "$here/crc16t10dif.c" "$here/crc64nvme.c" \
        || echo "[pistore-native] the no-ISA-L twin was not built; Crc16WithoutIsalTest will be skipped"
else
    rm -f "$tmp"
    skip "compilation failed (see above)"
fi
