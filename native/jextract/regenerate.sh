#!/usr/bin/env bash
# Regenerates TierKV's raw bindings with jextract, for comparison with the committed classes.
#
# jextract cannot be installed on TierKV's build machines, so the classes
#   native/src/main/java/io/tierkv/natives/hip/hip_h.java    (hip/hip_runtime_api.h, libamdhip64)
#   native/src/main/java/io/tierkv/natives/cuda/cuda_h.java  (cuda_runtime_api.h, libcudart)
# are written by GenerateBindings.java from the one symbol list gpu.symbols, and
#   native/src/main/java/io/tierkv/natives/libc/libc_h.java  (fcntl.h unistd.h sys/mman.h sys/resource.h string.h)
# by hand from includes.txt, all in the layout jextract generates (a holder class per function
# with its FunctionDescriptor and downcall MethodHandle, behind a method with the C name). Where
# jextract (https://jdk.java.net/jextract/) and the headers are installed, this script generates
# the same symbols into native/target/jextract/<api>/ and prints jextract's descriptors beside the
# committed ones. It is not run by CI; CI instead checks the committed descriptors against the
# lists and, with gcc, the lists against the headers (BindingSignaturesTest), and that hip_h and
# cuda_h equal GenerateBindings.java's output (GeneratedBindingsTest).
#
# Deliberate differences from jextract's output, kept when updating the committed classes:
#  1. hip_h and cuda_h are instantiated per loaded library (constructor takes a SymbolLookup)
#     rather than binding one library per JVM through a static lookup, so tests can load a fake
#     runtime and the real one in the same JVM; the holders keep address-free downcall handles.
#  2. libc functions that report errors through errno are linked with
#     Linker.Option.captureCallState("errno") and take a capture-state segment first.
#
# Usage: native/jextract/regenerate.sh [hip] [cuda] [libc]      (default: all three)
# Env:   JEXTRACT      jextract launcher (default: jextract on PATH)
#        HIP_INCLUDE   directory holding hip/hip_runtime_api.h (default /opt/rocm/include, then /usr/include)
#        CUDA_INCLUDE  directory holding cuda_runtime_api.h (default /usr/local/cuda/include)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$HERE/../target/jextract"
SRC="$HERE/../src/main/java/io/tierkv/natives"
JEXTRACT="${JEXTRACT:-jextract}"
command -v "$JEXTRACT" >/dev/null || { echo "jextract not found (set JEXTRACT or put it on PATH)" >&2; exit 2; }
mkdir -p "$OUT"

# Writes the --include-* lines of one section ("## hip/", "## cuda/", "## libc/") of includes.txt
# and of GenerateBindings.java's --includes output (the expansion of gpu.symbols).
section() {
  { cat "$HERE/includes.txt"; java "$HERE/GenerateBindings.java" --includes; } \
    | awk -v s="## $1/" 'index($0, s) == 1 {on = 1; next} /^## / {on = 0} on && /^--include-/ {print $1, $2}' \
    > "$OUT/$1.args"
}

# Prints "name: descriptor" for every FunctionDescriptor.of(...) in the Java files under $1.
descriptors() {
  grep -rhoE 'class [A-Za-z_0-9]+ \{|FunctionDescriptor\.(of|ofVoid)\([^;]*' "$1" \
    | awk '/^class/ {name = $2; next} {print name ": " $0}' | sed 's/hip_h\.\|cuda_h\.\|libc_h\.//g' | sort
}

compare() {
  echo "== $1: jextract (left) vs committed (right)"
  diff -y -W 200 <(descriptors "$OUT/$1") <(descriptors "$2") || true
}

run_hip() {
  local inc="${HIP_INCLUDE:-}"
  [ -z "$inc" ] && for d in /opt/rocm/include /usr/include; do [ -e "$d/hip/hip_runtime_api.h" ] && inc="$d" && break; done
  [ -n "$inc" ] || { echo "hip: headers not found (set HIP_INCLUDE)"; return; }
  section hip
  "$JEXTRACT" --target-package io.tierkv.natives.hip --header-class-name hip_h --library amdhip64 \
    -D __HIP_PLATFORM_AMD__ -I "$inc" --output "$OUT/hip" @"$OUT/hip.args" "$inc/hip/hip_runtime_api.h"
  compare hip "$SRC/hip/hip_h.java"
}

run_cuda() {
  local inc="${CUDA_INCLUDE:-/usr/local/cuda/include}"
  [ -e "$inc/cuda_runtime_api.h" ] || { echo "cuda: headers not found in $inc (set CUDA_INCLUDE)"; return; }
  section cuda
  "$JEXTRACT" --target-package io.tierkv.natives.cuda --header-class-name cuda_h --library cudart \
    -I "$inc" --output "$OUT/cuda" @"$OUT/cuda.args" "$inc/cuda_runtime_api.h"
  compare cuda "$SRC/cuda/cuda_h.java"
}

run_libc() {
  section libc
  printf '#include <fcntl.h>\n#include <unistd.h>\n#include <sys/mman.h>\n#include <sys/resource.h>\n#include <string.h>\n' \
    > "$OUT/libc.h"
  "$JEXTRACT" --target-package io.tierkv.natives.libc --header-class-name libc_h \
    --output "$OUT/libc" @"$OUT/libc.args" "$OUT/libc.h"
  compare libc "$SRC/libc/libc_h.java"
}

for api in "${@:-hip cuda libc}"; do
  for a in $api; do
    case "$a" in
      hip) run_hip ;;
      cuda) run_cuda ;;
      libc) run_libc ;;
      *) echo "unknown target: $a (expected hip, cuda or libc)" >&2; exit 2 ;;
    esac
  done
done
