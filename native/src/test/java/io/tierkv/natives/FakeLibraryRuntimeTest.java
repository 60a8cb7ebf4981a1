package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.natives.runtime.NativeGpuRuntime;
import io.tierkv.natives.testing.FakeGpuLibrary;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The native wrapper over the fake HIP/CUDA library of {@code src/test/c/fakegpu.c}: the contract,
 * plus the error paths and argument checks only a controllable library can show.
 */
abstract class FakeLibraryRuntimeTest extends GpuRuntimeContract {

    /** Which API's symbols to bind. */
    abstract GpuRuntimes.Api api();

    /** Opens the runtime over the fake library at {@code path}. */
    abstract GpuRuntime open(Path path) throws LibraryNotFoundException;

    /** The fake's selector for this API in {@link FakeGpuLibrary#setDevices}. */
    int fakeApi() {
        return api() == GpuRuntimes.Api.HIP ? FakeGpuLibrary.HIP : FakeGpuLibrary.CUDA;
    }

    <T> T pick(T hip, T cuda) {
        return api() == GpuRuntimes.Api.HIP ? hip : cuda;
    }

    @Override
    GpuRuntime openRuntime() {
        Path lib = FakeGpuLibrary.path();
        FakeGpuLibrary.reset();
        try {
            return open(lib);
        } catch (LibraryNotFoundException e) {
            throw new AssertionError(e);
        }
    }

    GpuRuntime openAgain() {
        try {
            return open(FakeGpuLibrary.path());
        } catch (LibraryNotFoundException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    void assertNothingLeaked() {
        assertEquals(0, ((NativeGpuRuntime) runtime).openResources(), "resources still registered");
        assertEquals(0, FakeGpuLibrary.liveDeviceAllocations(), "device allocations not freed");
        assertEquals(0, FakeGpuLibrary.liveHostAllocations(), "pinned host allocations not freed");
        assertEquals(0, FakeGpuLibrary.liveStreams(), "streams not destroyed");
        assertEquals(0, FakeGpuLibrary.liveEvents(), "events not destroyed");
    }

    @Override
    String expectedName() {
        return api().name();
    }

    @Override
    boolean exactMemoryAccounting() {
        return true;
    }

    @Test
    void anAllocationFailureSurfacesAsOutOfMemoryWithTheCallAndItsArguments() {
        FakeGpuLibrary.failNext("malloc", 2);
        var e = assertThrows(GpuException.class, () -> runtime.allocateDevice(4096));
        assertTrue(e.isOutOfMemory());
        assertEquals(api().name(), e.api());
        assertEquals(2, e.code());
        assertEquals(pick("hipErrorOutOfMemory", "cudaErrorMemoryAllocation"), e.name());
        assertEquals(pick("HIP hipErrorOutOfMemory (2): hipMalloc(&ptr, 4096 bytes): out of memory",
                "CUDA cudaErrorMemoryAllocation (2): cudaMalloc(&ptr, 4096 bytes): out of memory"), e.getMessage());
        assertEquals(0, FakeGpuLibrary.liveDeviceAllocations());
    }

    @Test
    void allocatingMoreThanTheDeviceHoldsIsOutOfMemory() {
        FakeGpuLibrary.setTotalMemory(8 * MIB);
        assertEquals(new MemoryInfo(8 * MIB, 8 * MIB), runtime.memoryInfo());
        assertFalse(runtime.deviceMemoryIsHostMemory(), "a GPU's memory is its own, not MemAvailable's");
        try (DeviceBuffer six = runtime.allocateDevice(6 * MIB)) {
            assertEquals(new MemoryInfo(2 * MIB, 8 * MIB), runtime.memoryInfo());
            var e = assertThrows(GpuException.class, () -> runtime.allocateDevice(4 * MIB));
            assertTrue(e.isOutOfMemory(), e.getMessage());
            assertEquals(6 * MIB, FakeGpuLibrary.liveDeviceBytes());
            assertEquals(6 * MIB, six.byteSize());
        }
    }

    @Test
    void aPinnedAllocationFailureNamesTheHostCall() {
        FakeGpuLibrary.failNext("hostMalloc", 2);
        var e = assertThrows(GpuException.class, () -> runtime.allocatePinnedHost(8192));
        assertEquals(pick("HIP hipErrorOutOfMemory (2): hipHostMalloc(&ptr, 8192 bytes, 0): out of memory",
                "CUDA cudaErrorMemoryAllocation (2): cudaHostAlloc(&ptr, 8192 bytes, 0): out of memory"), e.getMessage());
    }

    @Test
    void anInvalidValueFromACopyIsReportedAndNothingIsCopied() {
        MemorySegment src = arena.allocate(64);
        src.fill((byte) 5);
        try (DeviceBuffer d = runtime.allocateDevice(4096); GpuStream stream = runtime.createStream()) {
            FakeGpuLibrary.failNext("memcpyAsync", 1);
            var e = assertThrows(GpuException.class, () -> stream.copyHostToDevice(src, d, 128, 64));
            assertEquals(1, e.code());
            assertEquals(pick("hipErrorInvalidValue", "cudaErrorInvalidValue"), e.name());
            assertTrue(e.getMessage().contains(pick("hipMemcpyAsync(dst 0x", "cudaMemcpyAsync(dst 0x")
                    + Long.toHexString(d.address() + 128) + ", src, 64 bytes, HostToDevice): invalid argument"),
                    e.getMessage());
            assertEquals(0, FakeGpuLibrary.deviceMemoryAsHost(d.address() + 128, 1).get(ValueLayout.JAVA_BYTE, 0));
        }
    }

    @Test
    void aCodeTheEnumDoesNotKnowTakesTheLibrarysName() {
        FakeGpuLibrary.failNext("streamCreateWithFlags", 4242);
        var e = assertThrows(GpuException.class, runtime::createStream);
        assertEquals(4242, e.code());
        assertEquals(pick("hipErrorFake4242", "cudaErrorFake4242"), e.name());
        assertFalse(e.isOutOfMemory());
    }

    @Test
    void copiesPassDevicePointerPlusOffsetAndHostPointerInTheRightPlaces() {
        MemorySegment src = arena.allocate(256);
        for (int i = 0; i < 256; i++) {
            src.set(ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        try (DeviceBuffer d = runtime.allocateDevice(4096); GpuStream stream = runtime.createStream()) {
            stream.copyHostToDevice(src, d, 1000, 256);
            // The fake checks that dst is device memory and src is not for HostToDevice; its
            // "device" memory is host memory, so the bytes can be read where they must have landed.
            MemorySegment landed = FakeGpuLibrary.deviceMemoryAsHost(d.address() + 1000, 256);
            assertEquals(-1L, src.mismatch(landed));
            MemorySegment back = arena.allocate(100);
            stream.copyDeviceToHost(d, 1100, back, 100);
            assertArrayEquals(src.asSlice(100, 100).toArray(ValueLayout.JAVA_BYTE), back.toArray(ValueLayout.JAVA_BYTE));
            assertEquals(2, FakeGpuLibrary.calls("memcpyAsync"));
        }
    }

    @Test
    void eachBufferIsFreedExactlyOnceEvenWhenTheRuntimeClosesAfterIt() {
        DeviceBuffer d = runtime.allocateDevice(4096);
        PinnedHostBuffer p = runtime.allocatePinnedHost(4096);
        d.close();
        d.close();
        p.close();
        p.close();
        runtime.close();
        assertEquals(1, FakeGpuLibrary.calls("free"));
        assertEquals(1, FakeGpuLibrary.calls("hostFree"));
    }

    @Test
    void theRuntimeFreesWhatIsStillOpenExactlyOnce() {
        runtime.allocateDevice(4096);
        runtime.allocateDevice(8192);
        runtime.allocatePinnedHost(4096);
        GpuStream s = runtime.createStream();
        s.record();
        s.record();
        runtime.close();
        assertEquals(2, FakeGpuLibrary.calls("free"));
        assertEquals(1, FakeGpuLibrary.calls("hostFree"));
        assertEquals(1, FakeGpuLibrary.calls("streamDestroy"));
        assertEquals(2, FakeGpuLibrary.calls("eventDestroy"));
    }

    @Test
    void aFailedFreeIsReportedAndTheBufferStaysClosed() {
        DeviceBuffer d = runtime.allocateDevice(4096);
        FakeGpuLibrary.failNext("free", 1);
        var e = assertThrows(GpuException.class, d::close);
        assertEquals(1, e.code());
        assertTrue(d.isClosed());
        d.close(); // no second attempt
        assertEquals(1, FakeGpuLibrary.calls("free"));
        FakeGpuLibrary.reset(); // the fake still holds the allocation its failed free kept
    }

    @Test
    void aNotReadyEventIsIncompleteNotAnError() {
        try (GpuStream stream = runtime.createStream(); GpuEvent e = stream.record()) {
            FakeGpuLibrary.setEventPending(2);
            assertFalse(e.isComplete());
            assertFalse(e.isComplete());
            assertTrue(e.isComplete());
        }
    }

    @Test
    void theRuntimeVersionIsTheLibrarys() {
        assertEquals(pick(50221153, 12040), ((NativeGpuRuntime) runtime).runtimeVersion());
    }

    @Test
    void noDeviceIsRefusedAtOpenWithTheApisCode() {
        FakeGpuLibrary.setDevices(fakeApi(), 0, 100, true);
        var e = assertThrows(GpuException.class, this::openAgain);
        assertEquals(100, e.code());
        assertEquals(pick("hipErrorNoDevice", "cudaErrorNoDevice"), e.name());
    }

    @Test
    void successWithZeroDevicesIsStillNoDevice() {
        FakeGpuLibrary.setDevices(fakeApi(), 0, 0, true);
        var e = assertThrows(GpuException.class, this::openAgain);
        assertEquals(100, e.code());
        assertTrue(e.getMessage().endsWith("returned success with count 0"), e.getMessage());
    }

    @Test
    void anInsufficientDriverThatLeavesTheCountUnwrittenIsRefused() {
        long before = FakeGpuLibrary.calls("getDeviceCount");
        FakeGpuLibrary.setDevices(fakeApi(), 3, 35, false);
        var e = assertThrows(GpuException.class, this::openAgain);
        assertEquals(35, e.code());
        assertEquals(pick("hipErrorInsufficientDriver", "cudaErrorInsufficientDriver"), e.name());
        assertEquals(before + 1, FakeGpuLibrary.calls("getDeviceCount"));
    }
}
