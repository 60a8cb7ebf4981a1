#!/usr/bin/env bash
# TierKV device check: on a machine with an AMD (HIP) or NVIDIA (CUDA) GPU, allocates device and
# pinned host memory through TierKV's bindings, round-trips 1 GiB host -> device -> host in 1 MiB
# blocks with a CRC32C per block, and prints host-to-device and device-to-host GB/s for pinned and
# pageable host memory, per 1 MiB block and as one 1 GiB copy, beside the same copies done by
# PyTorch (tensor.copy_ with non_blocking=True on a side stream) where PyTorch with GPU support is
# installed. One run takes well under five minutes (each part has its own timeout).
#
# Usage: native/gpu-check.sh [--mib N] [--block-kib N] [--passes N] [--emulated]
#   --emulated  runs TierKV's part on the emulated device (a dry run on a machine without a GPU)
# Needs: JDK 25 (JAVA_HOME, else /usr/lib/jvm/temurin-25-jdk-amd64, else java on PATH) and the
# compiled classes in native/target/{classes,test-classes} (built with mvn here when missing).
# Exit status: 0 all checksums matched, 1 mismatch, 2 no GPU found (reasons printed), 3 setup.
set -euo pipefail
cd "$(dirname "$0")/.."

MIB=1024 BLOCK_KIB=1024 PASSES=3 EMULATED=0
args=("$@")
while [ $# -gt 0 ]; do
  case "$1" in
    --mib) MIB="$2"; shift 2 ;;
    --block-kib) BLOCK_KIB="$2"; shift 2 ;;
    --passes) PASSES="$2"; shift 2 ;;
    --emulated) EMULATED=1; shift ;;
    *) echo "unknown argument: $1" >&2; exit 3 ;;
  esac
done

if [ -z "${JAVA_HOME:-}" ] && [ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ]; then
  JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
if ! "$JAVA" -version 2>&1 | grep -qE 'version "(2[5-9]|[3-9][0-9])'; then
  echo "JDK 25 or newer needed: set JAVA_HOME (found: $("$JAVA" -version 2>&1 | head -1 || echo none))" >&2
  exit 3
fi

CLASSES=native/target/classes
TEST_CLASSES=native/target/test-classes
if [ ! -f "$TEST_CLASSES/io/tierkv/natives/GpuCheck.class" ] || [ ! -f "$CLASSES/io/tierkv/natives/GpuRuntimes.class" ]; then
  if command -v mvn >/dev/null; then
    JAVA_HOME="${JAVA_HOME:-}" mvn -B -q test-compile -pl native
  else
    echo "compiled classes missing in $CLASSES / $TEST_CLASSES and mvn is not installed" >&2
    exit 3
  fi
fi

echo "== host: $(uname -srm), $(nproc) CPUs"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
command -v rocm-smi >/dev/null && rocm-smi --showproductname 2>/dev/null | grep -i 'card series' || true

RESULTS="$(mktemp)"
trap 'rm -f "$RESULTS"' EXIT

echo "== TierKV ($MIB MiB in $BLOCK_KIB KiB blocks, best of $PASSES passes)"
set +e
timeout 200 "$JAVA" --enable-native-access=ALL-UNNAMED -Xmx1g -cp "$CLASSES:$TEST_CLASSES" \
  io.tierkv.natives.GpuCheck "${args[@]}" | tee -a "$RESULTS"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -eq 124 ]; then echo "TierKV check timed out after 200 s" >&2; fi
if [ "$rc" -eq 2 ]; then exit 2; fi # no GPU: the reasons are printed above

echo "== PyTorch reference"
if [ "$EMULATED" -eq 0 ] && command -v python3 >/dev/null \
    && python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  set +e
  timeout 90 python3 - "$MIB" "$BLOCK_KIB" "$PASSES" <<'PY' | tee -a "$RESULTS"
import sys
import torch

mib, block_kib, passes = (int(a) for a in sys.argv[1:4])
total, block = mib << 20, block_kib << 10
n = total // block
print(f"torch {torch.__version__}, device {torch.cuda.get_device_name(0)}")
dev = torch.empty(total, dtype=torch.uint8, device="cuda")
stream = torch.cuda.Stream()

def timed(copies):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        start.record(stream)
        copies()
        end.record(stream)
    end.synchronize()
    return total / (start.elapsed_time(end) * 1e6)  # GB/s, elapsed_time in ms

def measure(src, kind):
    dst = torch.empty_like(src, pin_memory=src.is_pinned())
    best = {}
    ok = True
    for p in range(passes + 1):  # pass 0 warms up
        dst.zero_()
        r = {
            ("h2d", "block"): timed(lambda: [dev[i * block:(i + 1) * block].copy_(src[i * block:(i + 1) * block], non_blocking=True) for i in range(n)]),
            ("d2h", "block"): timed(lambda: [dst[i * block:(i + 1) * block].copy_(dev[i * block:(i + 1) * block], non_blocking=True) for i in range(n)]),
        }
        ok &= bool(torch.equal(src, dst))
        r[("h2d", "whole")] = timed(lambda: dev.copy_(src, non_blocking=True))
        dst.zero_()
        r[("d2h", "whole")] = timed(lambda: dst.copy_(dev, non_blocking=True))
        ok &= bool(torch.equal(src, dst))
        if p > 0:
            for k, v in r.items():
                best[k] = max(best.get(k, 0.0), v)
    for (direction, shape), v in best.items():
        print(f"RESULT torch {direction} {kind} {shape} {v:.2f}")
    print(f"torch {kind} copies {'match' if ok else 'MISMATCH'}")

gen = torch.Generator().manual_seed(1)
measure(torch.randint(0, 256, (total,), dtype=torch.uint8, generator=gen).pin_memory(), "pinned")
measure(torch.randint(0, 256, (total,), dtype=torch.uint8, generator=gen), "pageable")
PY
  set -e
else
  echo "PyTorch with GPU support is not available here: no reference figures"
fi

echo "== GB/s (1 GB = 1e9 bytes), best of $PASSES"
printf '%-4s %-9s %-6s %10s %10s\n' dir host copy TierKV PyTorch
for dir in h2d d2h; do
  for host in pinned pageable; do
    for copy in block whole; do
      t=$(awk -v d="$dir" -v h="$host" -v c="$copy" '$1=="RESULT" && $2=="tierkv" && $3==d && $4==h && $5==c {print $6}' "$RESULTS")
      p=$(awk -v d="$dir" -v h="$host" -v c="$copy" '$1=="RESULT" && $2=="torch" && $3==d && $4==h && $5==c {print $6}' "$RESULTS")
      printf '%-4s %-9s %-6s %10s %10s\n' "$dir" "$host" "$copy" "${t:--}" "${p:--}"
    done
  done
done
exit "$rc"
