#!/usr/bin/env bash
# Runs native's whole test suite (the GpuRuntimeContract against a real CUDA or HIP device among it)
# on a machine that has a GPU but no Maven: JUnit's console launcher over the compiled classes.
#
# Usage: native/gpu-tests.sh CONSOLE_JAR [REPORTS_DIR]
#   CONSOLE_JAR  org.junit.platform:junit-platform-console-standalone of the JUnit in pom.xml
#                (mvn dependency:copy -Dartifact=org.junit.platform:junit-platform-console-standalone:1.14.1)
#   REPORTS_DIR  where the XML reports go (default native/target/gpu-test-reports)
# Needs: JDK 25 (JAVA_HOME, else /usr/lib/jvm/temurin-25-jdk-amd64; a jlink image of java.base,
# java.logging, java.management, java.xml, jdk.compiler, jdk.unsupported and jdk.zipfs is enough),
# native/target/{classes,test-classes} built where Maven is (mvn -B test-compile -pl native), gcc
# for the fake runtime's tests, and the CUDA runtime on the loader's path (libcudart.so; the script
# adds /usr/local/cuda/lib64 when it exists). A device's tests are skipped, with the reason, where
# its library or device is missing; a skip is not a pass.
# Exit status: the launcher's (0 when no test failed).
set -euo pipefail
[ $# -ge 1 ] && [ -f "$1" ] || { echo "usage: native/gpu-tests.sh CONSOLE_JAR [REPORTS_DIR] (CONSOLE_JAR: ${1:-missing})" >&2; exit 2; }
CONSOLE="$(realpath "$1")"
REPORTS="$(realpath -m "${2:-$(dirname "$0")/target/gpu-test-reports}")"
cd "$(dirname "$0")"
if [ -z "${JAVA_HOME:-}" ] && [ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ]; then
  JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
for d in target/classes target/test-classes; do
  [ -d "$d" ] || { echo "$d missing: run mvn -B test-compile -pl native where Maven is" >&2; exit 2; }
done
[ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
exec "$JAVA" --enable-native-access=ALL-UNNAMED -Xmx2g \
  -cp "target/classes:target/test-classes:$CONSOLE" org.junit.platform.console.ConsoleLauncher execute \
  --scan-classpath target/test-classes --details=tree --disable-banner --reports-dir="$REPORTS"
