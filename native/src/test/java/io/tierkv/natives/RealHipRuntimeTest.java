package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.abort;

import io.tierkv.natives.hip.HipRuntime;
import io.tierkv.natives.runtime.NativeGpuRuntime;
import org.junit.jupiter.api.BeforeAll;

/** The contract on a real HIP device; skipped where there is none. */
class RealHipRuntimeTest extends GpuRuntimeContract {

    @BeforeAll
    static void requireDevice() {
        try {
            HipRuntime.open().close();
        } catch (LibraryNotFoundException | GpuException | UnsatisfiedLinkError e) {
            abort("no HIP device here: " + e.getMessage());
        }
    }

    @Override
    GpuRuntime openRuntime() {
        try {
            return HipRuntime.open();
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
        return "HIP";
    }
}
