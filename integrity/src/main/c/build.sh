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

if [ ! -f /usr/include/isa-l/crc.h ]; then
    echo "[pistore-native] warning: libisal-dev headers missing; CRC-16 and CRC-32C will use Java unless libisal is present at run time"
fi

mkdir -p "$dest" || skip "cannot create $dest"
tmp="$dest/libpistore-native.so.tmp"
if "$cc" -O3 -std=gnu11 -Wall -Wextra -fPIC -shared -fvisibility=default \
    -I"$java_home/include" -I"$java_home/include/linux" \
    -o "$tmp" "$here/pistore_native.c" "$here/crc64nvme.c" -ldl; then
    mv -f "$tmp" "$dest/libpistore-native.so"
    echo "[pistore-native] built $dest/libpistore-native.so"
else
    rm -f "$tmp"
    skip "compilation failed (see above)"
fi
