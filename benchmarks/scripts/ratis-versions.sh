#!/usr/bin/env bash
# Two Ratis versions side by side on the same pistore build: this checkout's build (the Ratis version
# of the root pom) and a copy of it whose Ratis jars (and ratis-thirdparty-misc, at the version that
# Ratis release names) are swapped for VERSION's from the local Maven repository. Runs
# replicated-serve-cpu.sh on each in turn, ROUNDS times, so both see the same machine load; each
# line ends with the threads every peer started and the load average.
#
#   benchmarks/scripts/ratis-versions.sh VERSION [ROUNDS] [RW BS]   (from the repository root)
#
# OPTS_OTHER: JVM options for VERSION's peers only (e.g. -Dpistore.ratis.KEY=VALUE, Ratis settings;
# -Djava.util.concurrent.ForkJoinPool.common.parallelism=2); OPTS_BUILT: for the build's own.
# RAMP, WIN, QD as replicated-serve-cpu.sh. VERSION's jars must be in ~/.m2: fetch them once with
# `mvn -B dependency:get -Dartifact=org.apache.ratis:ratis-server:VERSION` (and ratis-grpc, ...).
set -euo pipefail
cd "$(dirname "$0")/../.."
version="${1:?Ratis version to compare with}"
rounds="${2:-2}"
rw="${3:-randwrite}"
bs="${4:-4k}"
m2="${M2_REPO:-$HOME/.m2/repository}/org/apache/ratis"
mvn -B -q -o -DskipTests -pl app,transport-tcp -am package > /dev/null
other="$(mktemp -d)"
trap 'rm -rf "$other"' EXIT
mkdir -p "$other/app/target" "$other/transport-tcp/target"
cp app/target/pistore-app-*.jar "$other/app/target/"
cp -r app/target/lib "$other/app/target/"
cp transport-tcp/target/pistore-transport-tcp-*.jar "$other/transport-tcp/target/"
thirdparty=$(sed -n 's:.*<ratis.thirdparty.version>\(.*\)</ratis.thirdparty.version>.*:\1:p' "$m2/ratis/$version/ratis-$version.pom")
for j in "$other"/app/target/lib/ratis-*.jar; do
    name=$(basename "$j" .jar)
    artifact=${name%-*}
    v=$version
    [ "$artifact" = ratis-thirdparty-misc ] && v=$thirdparty
    src="$m2/$artifact/$v/$artifact-$v.jar"
    [ -f "$src" ] || { echo "missing $src (mvn -B dependency:get -Dartifact=org.apache.ratis:$artifact:$v)" >&2; exit 2; }
    rm "$j"
    cp "$src" "$other/app/target/lib/"
done
built=$(sed -n 's:.*<ratis.version>\(.*\)</ratis.version>.*:\1:p' pom.xml)
for r in $(seq "$rounds"); do
    SERVE_OPTS="${OPTS_BUILT:-}" benchmarks/scripts/replicated-serve-cpu.sh . "ratis-$built" "$rw" "$bs"
    SERVE_OPTS="${OPTS_OTHER:-}" benchmarks/scripts/replicated-serve-cpu.sh "$other" "ratis-$version" "$rw" "$bs"
done
