package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.abort;

import io.tierkv.natives.runtime.NativeGpuRuntime;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * The contract on a real device of one API (the subclass opens it); every test is skipped where
 * the API's library or a device is missing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RealDeviceRuntimeTest extends GpuRuntimeContract {

    /** Opens the API's runtime from its usual sonames. */
    abstract GpuRuntime openReal() throws LibraryNotFoundException;

    @BeforeAll
    void requireDevice() {
        try {
            openReal().close();
        } catch (LibraryNotFoundException | GpuException | UnsatisfiedLinkError e) {
            abort("no " + expectedName() + " device here: " + e.getMessage());
        }
    }

    @Override
    GpuRuntime openRuntime() {
        try {
            return openReal();
        } catch (LibraryNotFoundException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    void assertNothingLeaked() {
        assertEquals(0, ((NativeGpuRuntime) runtime).openResources());
    }
}
