package io.tierkv.natives;

import io.tierkv.natives.hip.HipRuntime;
import java.nio.file.Path;

class HipOverFakeLibraryTest extends FakeLibraryRuntimeTest {

    @Override
    GpuRuntimes.Api api() {
        return GpuRuntimes.Api.HIP;
    }

    @Override
    GpuRuntime open(Path path) throws LibraryNotFoundException {
        return HipRuntime.open(path);
    }
}
