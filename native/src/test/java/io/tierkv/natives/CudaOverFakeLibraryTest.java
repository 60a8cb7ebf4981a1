package io.tierkv.natives;

import io.tierkv.natives.cuda.CudaRuntime;
import java.nio.file.Path;

class CudaOverFakeLibraryTest extends FakeLibraryRuntimeTest {

    @Override
    GpuRuntimes.Api api() {
        return GpuRuntimes.Api.CUDA;
    }

    @Override
    GpuRuntime open(Path path) throws LibraryNotFoundException {
        return CudaRuntime.open(path);
    }
}
