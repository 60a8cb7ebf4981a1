package io.tierkv.natives;

import io.tierkv.natives.hip.HipRuntime;

/** The contract on a real HIP device; skipped where there is none. */
class RealHipRuntimeTest extends RealDeviceRuntimeTest {

    @Override
    GpuRuntime openReal() throws LibraryNotFoundException {
        return HipRuntime.open();
    }

    @Override
    String expectedName() {
        return "HIP";
    }
}
