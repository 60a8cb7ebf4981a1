package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link GpuRuntime} must do, run against each implementation by a subclass: the
 * emulated device, HIP and CUDA over the fake library, and real HIP and CUDA where a device exists.
 * After every test the runtime is closed and the subclass checks that nothing leaked.
 */
abstract class GpuRuntimeContract {

    static final long MIB = 1 << 20;

    GpuRuntime runtime;
    Arena arena;

    /** Opens a fresh runtime for one test. */
    abstract GpuRuntime openRuntime();

    /** Checks, after the runtime was closed, that it freed everything it allocated. */
    abstract void assertNothingLeaked();

    /** The expected {@link GpuRuntime#name()}. */
    abstract String expectedName();

    /** Whether device buffers expose a host view (emulated only). */
    boolean hasHostView() {
        return false;
    }

    /** Whether free memory drops by exactly the bytes allocated (not on a shared real device). */
    boolean exactMemoryAccounting() {
        return false;
    }

    @BeforeEach
    void open() {
        runtime = openRuntime();
        arena = Arena.ofShared();
    }

    @AfterEach
    void closeAndCheckLeaks() {
        runtime.close();
        runtime.close(); // a second close is a no-op
        arena.close();
        assertNothingLeaked();
    }

    MemorySegment randomHost(long bytes, Random random) {
        MemorySegment s = arena.allocate(bytes, 64);
        byte[] data = new byte[(int) bytes];
        random.nextBytes(data);
        MemorySegment.copy(data, 0, s, ValueLayout.JAVA_BYTE, 0, data.length);
        return s;
    }

    @Test
    void reportsItsNameAndAtLeastOneDevice() {
        assertEquals(expectedName(), runtime.name());
        assertTrue(runtime.deviceCount() >= 1, "deviceCount " + runtime.deviceCount());
    }

    @Test
    void memoryInfoIsConsistentAndTracksAllocations() {
        MemoryInfo before = runtime.memoryInfo();
        assertTrue(before.totalBytes() > 0 && before.freeBytes() <= before.totalBytes(), before.toString());
        try (DeviceBuffer b = runtime.allocateDevice(4 * MIB)) {
            MemoryInfo during = runtime.memoryInfo();
            assertEquals(before.totalBytes(), during.totalBytes());
            if (exactMemoryAccounting()) {
                assertEquals(before.freeBytes() - 4 * MIB, during.freeBytes());
            }
            assertEquals(4 * MIB, b.byteSize());
        }
        if (exactMemoryAccounting()) {
            assertEquals(before.freeBytes(), runtime.memoryInfo().freeBytes());
        }
    }

    @Test
    void roundTripThroughTwoDeviceBuffersKeepsEveryByte() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        long bytes = 3 * MIB + 4099; // not a multiple of anything convenient
        MemorySegment src = randomHost(bytes, random);
        MemorySegment back = arena.allocate(bytes);
        try (DeviceBuffer a = runtime.allocateDevice(bytes);
                DeviceBuffer b = runtime.allocateDevice(bytes + 100);
                GpuStream stream = runtime.createStream()) {
            stream.copyHostToDevice(src, a, 0, bytes);
            stream.copyDeviceToDevice(a, 0, b, 100, bytes);
            stream.copyDeviceToHost(b, 100, back, bytes);
            stream.synchronize();
        }
        assertEquals(-1L, src.mismatch(back), "seed " + seed);
    }

    @Test
    void copiesAtHostOffsetsReadAndWriteExactlyThatRange() {
        Random random = new Random(7);
        long slot = 4099; // slots of one large host buffer, as the host tier keeps them
        MemorySegment host = randomHost(5 * slot, random);
        MemorySegment before = arena.allocate(5 * slot);
        before.copyFrom(host);
        try (DeviceBuffer d = runtime.allocateDevice(2 * slot); GpuStream stream = runtime.createStream()) {
            stream.copyHostToDevice(host, 3 * slot, d, slot, slot);  // host slot 3 -> device slot 1
            stream.copyDeviceToHost(d, slot, host, 1 * slot, slot);  // device slot 1 -> host slot 1
            stream.synchronize();
        }
        assertEquals(-1L, host.asSlice(slot, slot).mismatch(before.asSlice(3 * slot, slot)), "host slot 1 = old slot 3");
        for (long s : new long[] {0, 2, 3, 4}) {
            assertEquals(-1L, host.asSlice(s * slot, slot).mismatch(before.asSlice(s * slot, slot)),
                    "host slot " + s + " untouched");
        }
    }

    @Test
    void copiesOnOneStreamRunInQueueOrder() {
        MemorySegment result = arena.allocate(8);
        List<MemorySegment> values = new ArrayList<>();
        for (long v = 1; v <= 200; v++) {
            MemorySegment s = arena.allocate(8);
            s.set(ValueLayout.JAVA_LONG, 0, v);
            values.add(s);
        }
        try (DeviceBuffer d = runtime.allocateDevice(4096); GpuStream stream = runtime.createStream()) {
            for (MemorySegment v : values) {
                stream.copyHostToDevice(v, d, 8, 8); // each overwrites the previous one
            }
            stream.copyDeviceToHost(d, 8, result, 8);
            try (GpuEvent done = stream.record()) {
                done.synchronize();
                assertTrue(done.isComplete());
            }
        }
        assertEquals(200L, result.get(ValueLayout.JAVA_LONG, 0));
    }

    @Test
    void eventsCompleteAfterTheirWorkAndTimeIt() {
        MemorySegment src = randomHost(8 * MIB, new Random(1));
        MemorySegment back = arena.allocate(8 * MIB);
        try (DeviceBuffer d = runtime.allocateDevice(8 * MIB); GpuStream stream = runtime.createStream()) {
            GpuEvent start = stream.record();
            stream.copyHostToDevice(src, d, 0, 8 * MIB);
            stream.copyDeviceToHost(d, 0, back, 8 * MIB);
            GpuEvent end = stream.record();
            end.synchronize();
            assertTrue(start.isComplete());
            assertTrue(end.isComplete());
            float ms = end.elapsedMillisSince(start);
            assertTrue(ms >= 0 && ms < 60_000, "elapsed " + ms + " ms");
            assertEquals(-1L, src.mismatch(back));
            start.close();
            end.close();
            end.close();
            assertThrows(IllegalStateException.class, end::isComplete);
        }
    }

    @Test
    void copyOutOfBoundsIsRefusedWithFieldValueAndBound() {
        MemorySegment src = arena.allocate(16 * 1024);
        try (DeviceBuffer d = runtime.allocateDevice(8192); GpuStream stream = runtime.createStream()) {
            var h2d = assertThrows(IllegalArgumentException.class, () -> stream.copyHostToDevice(src, d, 4096, 8192));
            assertEquals("dstOffset + bytes: 4096 + 8192 = 12288 (expected <= dst.byteSize() 8192)", h2d.getMessage());
            var d2h = assertThrows(IllegalArgumentException.class, () -> stream.copyDeviceToHost(d, -1, src, 16));
            assertEquals("srcOffset: -1 (expected >= 0)", d2h.getMessage());
            var shortHost = assertThrows(IllegalArgumentException.class,
                    () -> stream.copyDeviceToHost(d, 0, src.asSlice(0, 100), 200));
            assertEquals("dstOffset + bytes: 0 + 200 = 200 (expected <= dst.byteSize() 100)", shortHost.getMessage());
            var hostOffset = assertThrows(IllegalArgumentException.class,
                    () -> stream.copyHostToDevice(src, 16 * 1024 - 8, d, 0, 16));
            assertEquals("srcOffset + bytes: 16376 + 16 = 16392 (expected <= src.byteSize() 16384)",
                    hostOffset.getMessage());
            var negativeHost = assertThrows(IllegalArgumentException.class,
                    () -> stream.copyDeviceToHost(d, 0, src, -8, 16));
            assertEquals("dstOffset: -8 (expected >= 0)", negativeHost.getMessage());
            var negative = assertThrows(IllegalArgumentException.class, () -> stream.copyHostToDevice(src, d, 0, -5));
            assertEquals("bytes: -5 (expected >= 0)", negative.getMessage());
            var overlap = assertThrows(IllegalArgumentException.class,
                    () -> stream.copyDeviceToDevice(d, 0, d, 100, 200));
            assertTrue(overlap.getMessage().contains("overlap"), overlap.getMessage());
            var huge = assertThrows(IllegalArgumentException.class,
                    () -> stream.copyDeviceToDevice(d, Long.MAX_VALUE, d, 0, 1));
            assertTrue(huge.getMessage().startsWith("srcOffset + bytes: "), huge.getMessage());
            stream.synchronize();
        }
    }

    @Test
    void heapAndReadOnlySegmentsAreRefused() {
        try (DeviceBuffer d = runtime.allocateDevice(4096); GpuStream stream = runtime.createStream()) {
            var heap = assertThrows(IllegalArgumentException.class,
                    () -> stream.copyHostToDevice(MemorySegment.ofArray(new byte[64]), d, 0, 64));
            assertEquals("src: a heap segment (expected a native segment)", heap.getMessage());
            MemorySegment readOnly = arena.allocate(64).asReadOnly();
            var ro = assertThrows(IllegalArgumentException.class, () -> stream.copyDeviceToHost(d, 0, readOnly, 64));
            assertEquals("dst: a read-only segment (expected writable)", ro.getMessage());
        }
    }

    @Test
    void buffersOfAnotherRuntimeAreRefused() {
        try (EmulatedDevice other = new EmulatedDevice(MIB);
                DeviceBuffer foreign = other.allocateDevice(4096);
                DeviceBuffer mine = runtime.allocateDevice(4096);
                GpuStream stream = runtime.createStream()) {
            var e = assertThrows(IllegalArgumentException.class,
                    () -> stream.copyDeviceToDevice(mine, 0, foreign, 0, 16));
            assertTrue(e.getMessage().startsWith("dst: a buffer of another runtime"), e.getMessage());
        }
    }

    @Test
    void zeroByteCopiesAreAcceptedAndDoNothing() {
        MemorySegment host = arena.allocate(16);
        host.fill((byte) 7);
        try (DeviceBuffer d = runtime.allocateDevice(4096); GpuStream stream = runtime.createStream()) {
            stream.copyHostToDevice(host, d, 4096, 0);
            stream.copyDeviceToHost(d, 0, host, 0);
            stream.synchronize();
        }
        assertEquals(7, host.get(ValueLayout.JAVA_BYTE, 15));
    }

    @Test
    void allocationSizesMustBePositive() {
        var zero = assertThrows(IllegalArgumentException.class, () -> runtime.allocateDevice(0));
        assertEquals("bytes: 0 (expected > 0)", zero.getMessage());
        var negative = assertThrows(IllegalArgumentException.class, () -> runtime.allocatePinnedHost(-1));
        assertEquals("bytes: -1 (expected > 0)", negative.getMessage());
    }

    @Test
    void aClosedBufferIsClosedOnceAndRefusesUse() {
        DeviceBuffer d = runtime.allocateDevice(4096);
        long address = d.address();
        assertTrue(address != 0);
        assertEquals(hasHostView(), d.hostView().isPresent());
        d.close();
        d.close();
        assertTrue(d.isClosed());
        assertEquals(4096, d.byteSize());
        assertThrows(IllegalStateException.class, d::address);
        assertThrows(IllegalStateException.class, d::hostView);
        try (GpuStream stream = runtime.createStream()) {
            assertThrows(IllegalStateException.class, () -> stream.copyHostToDevice(arena.allocate(16), d, 0, 16));
        }
    }

    @Test
    void pinnedHostMemoryIsPageAlignedAndReportsPinnedBytes() {
        PinnedHostBuffer p = runtime.allocatePinnedHost(MIB + 1);
        assertEquals(MIB + 1, p.requestedBytes());
        assertEquals(MIB + 1, p.segment().byteSize());
        assertEquals(0, p.segment().address() % 4096, "address " + p.segment().address());
        assertTrue(p.pinnedBytes() == 0 || p.pinnedBytes() >= p.requestedBytes(), "pinned " + p.pinnedBytes());
        p.segment().set(ValueLayout.JAVA_BYTE, MIB, (byte) 42);
        assertEquals(42, p.segment().get(ValueLayout.JAVA_BYTE, MIB));
        p.close();
        p.close();
        assertTrue(p.isClosed());
        assertThrows(IllegalStateException.class, () -> p.segment().get(ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    void pinnedMemoryRoundTripsThroughTheDevice() {
        try (PinnedHostBuffer in = runtime.allocatePinnedHost(2 * MIB);
                PinnedHostBuffer out = runtime.allocatePinnedHost(2 * MIB);
                DeviceBuffer d = runtime.allocateDevice(2 * MIB);
                GpuStream stream = runtime.createStream()) {
            for (long i = 0; i < 2 * MIB; i += 8) {
                in.segment().set(ValueLayout.JAVA_LONG, i, i * 31 + 7);
            }
            stream.copyHostToDevice(in.segment(), d, 0, 2 * MIB);
            stream.copyDeviceToHost(d, 0, out.segment(), 2 * MIB);
            stream.synchronize();
            assertEquals(-1L, in.segment().mismatch(out.segment()));
        }
    }

    @Test
    void closingTheRuntimeClosesEverythingItStillOwns() {
        DeviceBuffer a = runtime.allocateDevice(MIB);
        DeviceBuffer b = runtime.allocateDevice(2 * MIB);
        PinnedHostBuffer p = runtime.allocatePinnedHost(MIB);
        GpuStream stream = runtime.createStream();
        stream.copyHostToDevice(p.segment(), a, 0, MIB);
        GpuEvent e = stream.record();
        b.close(); // closed on its own first: the runtime must not free it again
        runtime.close();
        assertTrue(a.isClosed());
        assertTrue(b.isClosed());
        assertTrue(p.isClosed());
        assertThrows(IllegalStateException.class, e::isComplete);
        assertThrows(IllegalStateException.class, stream::synchronize);
        assertThrows(IllegalStateException.class, () -> runtime.allocateDevice(MIB));
        assertThrows(IllegalStateException.class, runtime::createStream);
        assertThrows(IllegalStateException.class, runtime::memoryInfo);
        assertDoesNotThrow(a::close);
        assertDoesNotThrow(stream::close);
    }

    @Test
    void randomCopySequencesMatchAReferenceModel() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        int size = 64 * 1024;
        byte[] model = new byte[size];
        MemorySegment staging = arena.allocate(size);
        try (DeviceBuffer d = runtime.allocateDevice(size);
                DeviceBuffer scratch = runtime.allocateDevice(size);
                GpuStream stream = runtime.createStream()) {
            stream.copyHostToDevice(staging, d, 0, size); // zero both the device and the model
            for (int step = 0; step < 300; step++) {
                int len = 1 + random.nextInt(4096);
                int at = random.nextInt(size - len + 1);
                switch (random.nextInt(3)) {
                    case 0 -> { // host -> device from a fresh segment
                        byte[] data = new byte[len];
                        random.nextBytes(data);
                        MemorySegment src = arena.allocate(len);
                        MemorySegment.copy(data, 0, src, ValueLayout.JAVA_BYTE, 0, len);
                        stream.copyHostToDevice(src, d, at, len);
                        System.arraycopy(data, 0, model, at, len);
                    }
                    case 1 -> { // device -> scratch -> device elsewhere
                        int to = random.nextInt(size - len + 1);
                        stream.copyDeviceToDevice(d, at, scratch, 0, len);
                        stream.copyDeviceToDevice(scratch, 0, d, to, len);
                        System.arraycopy(model.clone(), at, model, to, len);
                    }
                    default -> { // device -> host, checked at once
                        MemorySegment dst = arena.allocate(len);
                        stream.copyDeviceToHost(d, at, dst, len);
                        stream.synchronize();
                        byte[] got = dst.toArray(ValueLayout.JAVA_BYTE);
                        byte[] want = java.util.Arrays.copyOfRange(model, at, at + len);
                        assertArrayEquals(want, got, "seed " + seed + " step " + step);
                    }
                }
            }
            MemorySegment all = arena.allocate(size);
            stream.copyDeviceToHost(d, 0, all, size);
            stream.synchronize();
            assertArrayEquals(model, all.toArray(ValueLayout.JAVA_BYTE), "seed " + seed);
        }
    }

    @Test
    void streamsOnSeveralThreadsKeepTheirOwnBytes() throws Exception {
        int threads = 3;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long seed = 1000 + t;
                results.add(pool.submit(() -> {
                    Random random = new Random(seed);
                    MemorySegment src = randomHost(MIB, random);
                    MemorySegment back = arena.allocate(MIB);
                    try (DeviceBuffer d = runtime.allocateDevice(MIB); GpuStream s = runtime.createStream()) {
                        for (int i = 0; i < 5; i++) {
                            s.copyHostToDevice(src, d, 0, MIB);
                            s.copyDeviceToHost(d, 0, back, MIB);
                        }
                        s.synchronize();
                    }
                    return src.mismatch(back);
                }));
            }
            for (Future<Long> f : results) {
                assertEquals(-1L, f.get());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aClosedStreamRefusesWork() {
        GpuStream stream = runtime.createStream();
        stream.close();
        stream.close();
        try (DeviceBuffer d = runtime.allocateDevice(4096)) {
            assertThrows(IllegalStateException.class, () -> stream.copyHostToDevice(arena.allocate(8), d, 0, 8));
            assertThrows(IllegalStateException.class, stream::record);
            assertFalse(d.isClosed());
        }
    }
}
