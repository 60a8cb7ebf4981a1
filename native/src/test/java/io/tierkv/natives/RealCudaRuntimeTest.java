package io.tierkv.natives;

import io.tierkv.natives.cuda.CudaRuntime;

/** The contract on a real CUDA device; skipped where there is none. */
class RealCudaRuntimeTest extends RealDeviceRuntimeTest {

    @Override
    GpuRuntime openReal() throws LibraryNotFoundException {
        return CudaRuntime.open();
    }

    @Override
    String expectedName() {
        return "CUDA";
    }
}
