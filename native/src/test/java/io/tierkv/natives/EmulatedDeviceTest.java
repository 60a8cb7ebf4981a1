package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class EmulatedDeviceTest extends GpuRuntimeContract {

    @Override
    GpuRuntime openRuntime() {
        return new EmulatedDevice(64 * MIB);
    }

    @Override
    void assertNothingLeaked() {
        EmulatedDevice device = (EmulatedDevice) runtime;
        assertEquals(0, device.usedBytes(), "device bytes still allocated");
        assertEquals(0, device.openResources(), "resources still registered");
    }

    @Override
    String expectedName() {
        return "EMULATED";
    }

    @Override
    boolean hasHostView() {
        return true;
    }

    @Override
    boolean exactMemoryAccounting() {
        return true;
    }

    @Test
    void allocationBeyondCapacityIsOutOfMemoryAndFreeingMakesRoom() {
        try (EmulatedDevice small = new EmulatedDevice(8 * MIB)) {
            DeviceBuffer six = small.allocateDevice(6 * MIB);
            var e = assertThrows(GpuException.class, () -> small.allocateDevice(3 * MIB));
            assertTrue(e.isOutOfMemory());
            assertEquals("EMULATED", e.api());
            assertEquals(2, e.code());
            assertEquals("emulatedErrorOutOfMemory", e.name());
            assertEquals("EMULATED emulatedErrorOutOfMemory (2): allocateDevice(3145728 bytes): capacity 8388608"
                    + " bytes, used 6291456 bytes, free 2097152 bytes", e.getMessage());
            assertEquals(new MemoryInfo(2 * MIB, 8 * MIB), small.memoryInfo());
            six.close();
            try (DeviceBuffer three = small.allocateDevice(3 * MIB)) {
                assertEquals(3 * MIB, small.usedBytes());
                assertEquals(3 * MIB, three.byteSize());
            }
            assertEquals(0, small.usedBytes());
        }
    }

    @Test
    void itsDeviceMemoryIsHostMemory() {
        try (EmulatedDevice d = new EmulatedDevice(MIB)) {
            assertTrue(d.deviceMemoryIsHostMemory(), "its buffers count against MemAvailable");
        }
    }

    @Test
    void capacityMustBePositive() {
        var e = assertThrows(IllegalArgumentException.class, () -> new EmulatedDevice(0));
        assertEquals("capacityBytes: 0 (expected > 0)", e.getMessage());
    }

    @Test
    void defaultCapacityIsHalfOfPhysicalMemory() {
        try (EmulatedDevice d = new EmulatedDevice()) {
            assertEquals(EmulatedDevice.defaultCapacityBytes(), d.capacityBytes());
            assertTrue(d.capacityBytes() >= 256 * MIB, "capacity " + d.capacityBytes());
        }
    }

    @Test
    void deviceMemoryStartsZeroedAndTheHostViewIsTheDeviceBytes() {
        try (DeviceBuffer d = runtime.allocateDevice(MIB); GpuStream stream = runtime.createStream()) {
            MemorySegment view = d.hostView().orElseThrow();
            assertEquals(d.address(), view.address());
            assertEquals(-1L, view.mismatch(arena.allocate(MIB)), "not zero-filled");
            view.set(ValueLayout.JAVA_INT, 4096, 0xCAFE);
            MemorySegment out = arena.allocate(4);
            stream.copyDeviceToHost(d, 4096, out, 4);
            stream.synchronize();
            assertEquals(0xCAFE, out.get(ValueLayout.JAVA_INT, 0));
        }
    }

    @Test
    void freeingABufferWaitsForTheCopiesQueuedOnIt() {
        MemorySegment src = arena.allocate(16 * MIB);
        MemorySegment back = arena.allocate(16 * MIB);
        src.fill((byte) 3);
        GpuStream stream = runtime.createStream();
        DeviceBuffer d = runtime.allocateDevice(16 * MIB);
        for (int i = 0; i < 8; i++) {
            stream.copyHostToDevice(src, d, 0, 16 * MIB);
        }
        stream.copyDeviceToHost(d, 0, back, 16 * MIB);
        d.close(); // must wait: the worker still reads and writes d
        assertTrue(d.isClosed());
        stream.synchronize(); // no failure: every copy ran on live memory
        assertEquals(3, back.get(ValueLayout.JAVA_BYTE, 16 * MIB - 1));
        assertEquals(0, ((EmulatedDevice) runtime).usedBytes());
        stream.close();
    }

    @Test
    void closingTheDeviceDrainsQueuedCopiesBeforeFreeing() {
        MemorySegment back = arena.allocate(4 * MIB);
        DeviceBuffer d = runtime.allocateDevice(4 * MIB);
        d.hostView().orElseThrow().fill((byte) 9);
        GpuStream stream = runtime.createStream();
        for (int i = 0; i < 10; i++) {
            stream.copyDeviceToHost(d, 0, back, 4 * MIB);
        }
        runtime.close();
        assertEquals(9, back.get(ValueLayout.JAVA_BYTE, 4 * MIB - 1));
    }

    @Test
    void aCopyFromAHostSegmentClosedBeforeItRanFailsTheStreamWithIllegalAddress() {
        EmulatedDevice device = (EmulatedDevice) runtime;
        DeviceBuffer big = runtime.allocateDevice(MIB);
        DeviceBuffer small = runtime.allocateDevice(4096);
        GpuStream stream = runtime.createStream();
        Arena shortLived = Arena.ofShared();
        MemorySegment src = shortLived.allocate(4096);
        device.stallCopies(); // the copies below queue behind a held one, so the arena closes first
        stream.copyHostToDevice(arena.allocate(MIB), big, 0, MIB);
        GpuEvent before = stream.record();
        stream.copyHostToDevice(src, small, 0, 4096);
        GpuEvent after = stream.record();
        assertFalse(after.isComplete());
        shortLived.close();
        device.resumeCopies();
        before.synchronize(); // work before the failure is fine
        var e = assertThrows(GpuException.class, after::synchronize);
        assertEquals(700, e.code());
        assertEquals("emulatedErrorIllegalAddress", e.name());
        assertTrue(e.getCause() instanceof IllegalStateException, String.valueOf(e.getCause()));
        assertThrows(GpuException.class, stream::synchronize);
        assertThrows(GpuException.class, after::isComplete);
    }

    @Test
    void anIdleStreamCopiesInlineAndAStalledCopyStillDefersTheCopiesBehindIt() throws Exception {
        EmulatedDevice device = (EmulatedDevice) runtime;
        MemorySegment ones = arena.allocate(MIB).fill((byte) 1);
        MemorySegment twos = arena.allocate(MIB).fill((byte) 2);
        MemorySegment back = arena.allocate(MIB);
        try (DeviceBuffer d = runtime.allocateDevice(MIB); GpuStream stream = runtime.createStream()) {
            MemorySegment view = d.hostView().orElseThrow();
            stream.copyHostToDevice(ones, d, 0, MIB); // idle stream: done when the call returns
            assertEquals(1, view.get(ValueLayout.JAVA_BYTE, MIB - 1));
            try (GpuEvent first = stream.record()) {
                assertTrue(first.isComplete(), "an event recorded after an inline copy completes at once");
            }
            device.stallCopies();
            stream.copyHostToDevice(twos, d, 0, MIB); // stalled: must not run inline
            GpuEvent held = stream.record();
            stream.copyDeviceToHost(d, 0, back, MIB); // queued behind the held copy, not inline
            Thread.sleep(50);
            assertFalse(held.isComplete(), "a stalled copy completed");
            assertEquals(1, view.get(ValueLayout.JAVA_BYTE, 0), "a stalled copy wrote the device");
            assertEquals(0, back.get(ValueLayout.JAVA_BYTE, 0), "a copy overtook the stalled one");
            device.resumeCopies();
            held.synchronize();
            held.close();
            stream.synchronize();
            assertEquals(-1L, back.mismatch(twos), "stream order: the read-back sees the held write");
            stream.copyHostToDevice(ones, d, 0, MIB); // idle again: inline again
            assertEquals(-1L, view.mismatch(ones));
        }
    }

    @Test
    void recordIfPendingMakesNoEventForWorkDoneInlineAndAnUntimedCountedOneOtherwise() throws Exception {
        EmulatedDevice device = (EmulatedDevice) runtime;
        MemorySegment ones = arena.allocate(MIB).fill((byte) 1);
        try (DeviceBuffer d = runtime.allocateDevice(MIB); GpuStream stream = runtime.createStream()) {
            int open = device.openResources();
            assertTrue(stream.recordIfPending().isEmpty(), "an idle stream with nothing queued");
            stream.copyHostToDevice(ones, d, 0, MIB);
            assertTrue(stream.recordIfPending().isEmpty(), "a copy run inline is done when its call returns");
            device.stallCopies();
            stream.copyHostToDevice(ones, d, 0, MIB);
            GpuEvent pending = stream.recordIfPending().orElseThrow();
            assertEquals(open + 1, device.openResources(), "an open event counts");
            assertFalse(pending.isComplete());
            try (GpuEvent timed = stream.record()) {
                var e = assertThrows(IllegalArgumentException.class, () -> timed.elapsedMillisSince(pending));
                assertEquals("start: recorded without timing (recordIfPending); expected an event from record()",
                        e.getMessage());
                device.resumeCopies();
                pending.synchronize();
                assertTrue(pending.isComplete());
                assertThrows(IllegalArgumentException.class, () -> pending.elapsedMillisSince(timed));
            }
            pending.close();
            pending.close();
            assertEquals(open, device.openResources(), "closed once, counted once");
            assertThrows(IllegalStateException.class, pending::isComplete);
            stream.synchronize(); // the timed event's marker, queued after the copy, may still be running
            assertTrue(stream.recordIfPending().isEmpty(), "every task queued has finished");
        }
    }

    @Test
    void recordIfPendingReportsAFailedCopyThroughItsEventEvenOnceTheStreamIsDone() {
        EmulatedDevice device = (EmulatedDevice) runtime;
        DeviceBuffer small = runtime.allocateDevice(4096);
        GpuStream stream = runtime.createStream();
        Arena shortLived = Arena.ofShared();
        MemorySegment src = shortLived.allocate(4096);
        device.stallCopies();
        stream.copyHostToDevice(src, small, 0, 4096);
        shortLived.close();
        device.resumeCopies();
        assertThrows(GpuException.class, stream::synchronize);
        GpuEvent failed = stream.recordIfPending().orElseThrow(); // not empty: the work failed
        var e = assertThrows(GpuException.class, failed::isComplete);
        assertEquals(700, e.code());
        failed.close();
    }

    @Test
    void closingTheDeviceClosesItsUntimedEvents() {
        EmulatedDevice device = new EmulatedDevice(8 * MIB);
        DeviceBuffer d = device.allocateDevice(MIB);
        GpuStream stream = device.createStream();
        device.stallCopies();
        stream.copyHostToDevice(arena.allocate(MIB), d, 0, MIB);
        GpuEvent pending = stream.recordIfPending().orElseThrow();
        device.resumeCopies();
        device.close();
        assertEquals(0, device.openResources());
        assertThrows(IllegalStateException.class, pending::isComplete);
        pending.close();
        assertEquals(0, device.openResources());
    }
}
