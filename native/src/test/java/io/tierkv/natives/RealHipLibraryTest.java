package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

import io.tierkv.natives.hip.HipRuntime;
import io.tierkv.natives.hip.hip_h;
import io.tierkv.natives.runtime.LibraryLoader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The real HIP runtime as Debian ships it ({@code libamdhip64-5}, installed by {@code .ci/run}) on
 * a machine without an AMD GPU: it must load, answer "no device" cleanly through the bindings, and
 * detection must fall back. Skipped where the library is absent, except under {@code CI=true}.
 */
class RealHipLibraryTest {

    private static LibraryLoader.Loaded loadOrSkip() {
        try {
            return LibraryLoader.loadFirst(HipRuntime.SONAMES);
        } catch (LibraryNotFoundException e) {
            String why = "the HIP runtime is not installed (apt-get install libamdhip64-5): " + e.getMessage();
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                return fail(why + " (CI=true: .ci/run installs it)");
            }
            return abort(why);
        }
    }

    @Test
    void theRealLibraryAnswersNoDeviceThroughTheBindings() {
        LibraryLoader.Loaded lib = loadOrSkip();
        hip_h h = new hip_h(lib.lookup(), lib.name());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment version = arena.allocate(ValueLayout.JAVA_INT);
            assertEquals(0, h.hipRuntimeGetVersion(version));
            assertTrue(version.get(ValueLayout.JAVA_INT, 0) >= 50_000_000, "version " + version.get(ValueLayout.JAVA_INT, 0));
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            count.set(ValueLayout.JAVA_INT, 0, -1);
            int rc = h.hipGetDeviceCount(count);
            if (rc == 0 && count.get(ValueLayout.JAVA_INT, 0) > 0) {
                abort("a HIP device is present; RealHipRuntimeTest covers it");
            }
            assertEquals(100, rc);
            assertEquals(0, count.get(ValueLayout.JAVA_INT, 0));
            assertEquals("hipErrorNoDevice", h.hipGetErrorName(rc).getString(0));
            MemorySegment ptr = arena.allocate(ValueLayout.ADDRESS);
            int mallocRc = h.hipMalloc(ptr, 1024);
            assertTrue(mallocRc != 0, "hipMalloc without a device returned success");
            assertEquals(MemorySegment.NULL, ptr.get(ValueLayout.ADDRESS, 0));
        }
    }

    @Test
    void openingTheRealLibraryWithoutADeviceThrowsNoDeviceAndDetectionFallsBack() {
        LibraryLoader.Loaded lib = loadOrSkip();
        try {
            HipRuntime.open(lib.lookup(), lib.name()).close();
            abort("a HIP device is present; RealHipRuntimeTest covers it");
        } catch (GpuException e) {
            assertEquals("HIP", e.api());
            assertEquals(100, e.code());
            assertEquals("hipErrorNoDevice", e.name());
        }
        GpuRuntimes.Probe hipOnly = GpuRuntimes.probe(List.of(GpuRuntimes.Candidate.hip()));
        assertEquals(Optional.empty(), hipOnly.runtime());
        assertEquals(1, hipOnly.skipped().size());
        assertTrue(hipOnly.skipped().getFirst().startsWith("HIP skipped: no device: HIP hipErrorNoDevice (100)"),
                hipOnly.skipped().getFirst());
        GpuRuntimes.Probe cudaOnly = GpuRuntimes.probe(List.of(GpuRuntimes.Candidate.cuda()));
        if (cudaOnly.runtime().isPresent()) {
            cudaOnly.runtime().get().close();
            abort("a CUDA device is present: detect() rightly returns it");
        }
        assertEquals(Optional.empty(), GpuRuntimes.detect());
        try (GpuRuntime fallback = GpuRuntimes.detect().orElseGet(() -> new EmulatedDevice(1 << 20))) {
            assertEquals("EMULATED", fallback.name());
        }
    }
}
