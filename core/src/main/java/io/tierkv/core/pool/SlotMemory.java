package io.tierkv.core.pool;

import java.lang.foreign.MemorySegment;

/**
 * The memory behind the top tier's slots, as host-addressable segments (host slabs, or an
 * emulated device's buffers).
 *
 * <p>An implementation may return the same segment instance for a slot on every call
 * ({@link SlabMemory}) or a new view per call (the device tier, which keeps no object per slot);
 * either way the segment covers exactly the slot and stays valid while the memory is open.
 * Thread-safe for distinct slots.
 */
public interface SlotMemory {

    /**
     * Returns the memory of one slot.
     *
     * @param slot slot index in [0, capacity)
     * @return the slot's bytes, exactly {@link #slotBytes()} long
     */
    MemorySegment slot(int slot);

    /** {@return number of slots} */
    int capacity();

    /** {@return bytes per slot} */
    int slotBytes();
}
