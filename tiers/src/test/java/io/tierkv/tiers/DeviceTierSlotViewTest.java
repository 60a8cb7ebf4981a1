package io.tierkv.tiers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tierkv.natives.EmulatedDevice;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link DeviceTier#slot(int)} keeps no view per slot: each view covers exactly its slot, a slot's
 * view is reused while no other slot of its table entry took it, and slots that share an entry
 * (more slots than the 4,096 kept views) still get their own memory.
 */
class DeviceTierSlotViewTest {

    @ParameterizedTest
    @ValueSource(ints = {1, 3, 4096, 5000})
    void everySlotViewCoversExactlyItsSlot(int capacity) {
        int slotBytes = 64;
        try (EmulatedDevice runtime = new EmulatedDevice((long) capacity * slotBytes + (1 << 20));
                DeviceTier device = new DeviceTier(runtime, capacity, slotBytes)) {
            long base = device.slot(0).address();
            for (int s = 0; s < capacity; s++) {
                MemorySegment v = device.slot(s);
                assertEquals(slotBytes, v.byteSize());
                assertEquals(base + (long) s * slotBytes, v.address(), "slot " + s);
                v.set(ValueLayout.JAVA_INT, 0, s);
            }
            for (int s = 0; s < capacity; s++) {
                assertEquals(s, device.slot(s).get(ValueLayout.JAVA_INT, 0), "slot " + s + " reads its own bytes");
            }
            MemorySegment last = device.slot(capacity - 1);
            assertSame(last, device.slot(capacity - 1), "a slot read again reuses its view");
            if (capacity > 4096) {
                MemorySegment low = device.slot(capacity - 1 - 4096); // the same table entry
                assertNotSame(last, low);
                assertEquals(base + (long) (capacity - 1 - 4096) * slotBytes, low.address());
                assertEquals(base + (long) (capacity - 1) * slotBytes, device.slot(capacity - 1).address());
            }
            assertThrows(IndexOutOfBoundsException.class, () -> device.slot(capacity));
            assertThrows(IndexOutOfBoundsException.class, () -> device.slot(-1));
        }
    }
}
