package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.abort;

import io.tierkv.natives.cuda.CudaRuntime;
import io.tierkv.natives.runtime.NativeGpuRuntime;
import org.junit.jupiter.api.BeforeAll;

/** The contract on a real CUDA device; skipped where there is none. */
class RealCudaRuntimeTest extends GpuRuntimeContract {

    @BeforeAll
    static void requireDevice() {
        try {
            CudaRuntime.open().close();
        } catch (LibraryNotFoundException | GpuException | UnsatisfiedLinkError e) {
            abort("no CUDA device here: " + e.getMessage());
        }
    }

    @Override
    GpuRuntime openRuntime() {
        try {
            return CudaRuntime.open();
        } catch (LibraryNotFoundException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    void assertNothingLeaked() {
        assertEquals(0, ((NativeGpuRuntime) runtime).openResources());
    }

    @Override
    String expectedName() {
        return "CUDA";
    }
}
