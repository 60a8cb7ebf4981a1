package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;

import io.tierkv.natives.cuda.CudaError;
import io.tierkv.natives.cuda.CudaRuntime;
import io.tierkv.natives.cuda.cuda_h;
import io.tierkv.natives.runtime.LibraryLoader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A real CUDA runtime library where one is installed without a working driver or device (CI does
 * not install one, so this is skipped there): the bindings must get a clean "no driver" or "no
 * device" answer, and an insufficient-driver answer (35) must leave the count unwritten.
 */
class RealCudaLibraryTest {

    @Test
    void aRealCudaRuntimeWithoutADriverAnswersCleanlyAndDetectionSkipsIt() {
        LibraryLoader.Loaded lib;
        try {
            lib = LibraryLoader.loadFirst(CudaRuntime.SONAMES);
        } catch (LibraryNotFoundException e) {
            abort("no CUDA runtime library installed: " + e.getMessage());
            return;
        }
        cuda_h h = new cuda_h(lib.lookup(), lib.name());
        int rc;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            count.set(ValueLayout.JAVA_INT, 0, -7);
            rc = h.cudaGetDeviceCount(count);
            if (rc == 0 && count.get(ValueLayout.JAVA_INT, 0) > 0) {
                abort("a CUDA device is present; RealCudaRuntimeTest covers it");
            }
            assertTrue(Set.of(34, 35, 100).contains(rc), "cudaGetDeviceCount returned " + rc);
            if (rc == 35) {
                assertEquals(-7, count.get(ValueLayout.JAVA_INT, 0), "the count was written");
            }
            assertEquals(CudaError.of(rc).cName(), h.cudaGetErrorName(rc).getString(0));
            MemorySegment version = arena.allocate(ValueLayout.JAVA_INT);
            assertEquals(0, h.cudaRuntimeGetVersion(version));
            assertTrue(version.get(ValueLayout.JAVA_INT, 0) >= 12000, "version " + version.get(ValueLayout.JAVA_INT, 0));
        }
        GpuRuntimes.Probe p = GpuRuntimes.probe(List.of(GpuRuntimes.Candidate.cuda()));
        assertEquals(Optional.empty(), p.runtime());
        assertTrue(p.skipped().getFirst().contains("(" + rc + "): cudaGetDeviceCount(&count) on " + lib.name()),
                p.skipped().getFirst());
    }
}
