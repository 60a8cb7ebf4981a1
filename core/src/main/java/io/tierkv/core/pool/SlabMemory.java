package io.tierkv.core.pool;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Fixed-size slots carved from a few large off-heap chunks.
 *
 * <pre>
 * chunk c (one shared Arena each, 4 KiB aligned):
 *   [slot c*k][slot c*k+1] ... [slot c*k+k-1]        k = slotsPerChunk
 * slot s lives in chunk s / k at byte (s % k) * slotBytes
 * </pre>
 *
 * <p>One arena per chunk, never one per slot (closing a shared arena costs tens of microseconds).
 * The slice of every slot is created once, so {@link #slot(int)} allocates nothing. Chunks are
 * written once at creation, by the arena's zero-fill (not again: issue 19 part 3): memory these
 * virtual machines reclaimed while idle is slow on its first write, so a pool is touched when made
 * and then kept. Thread-safe for reads of distinct slots; {@link #close()} must not race with use.
 */
public final class SlabMemory implements SlotMemory, AutoCloseable {

    /** Largest chunk, so that a pool of many slots is still a handful of arenas. */
    public static final long MAX_CHUNK_BYTES = 1L << 30;

    private final int slotBytes;
    private final int capacity;
    private final Arena[] arenas;
    private final MemorySegment[] slots;
    private volatile boolean closed;

    /**
     * Allocates {@code capacity x slotBytes} bytes, zero-filled (every page written once).
     *
     * @param capacity  number of slots, at least 1
     * @param slotBytes bytes per slot, at least 1
     * @throws IllegalArgumentException naming the field when a size is out of range
     * @throws OutOfMemoryError         if the off-heap memory cannot be had
     */
    public SlabMemory(int capacity, int slotBytes) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected >= 1)");
        }
        if (slotBytes < 1) {
            throw new IllegalArgumentException("slotBytes: " + slotBytes + " (expected >= 1)");
        }
        this.slotBytes = slotBytes;
        this.capacity = capacity;
        int slotsPerChunk = (int) Math.max(1, Math.min(capacity, MAX_CHUNK_BYTES / slotBytes));
        int chunks = (capacity + slotsPerChunk - 1) / slotsPerChunk;
        this.arenas = new Arena[chunks];
        this.slots = new MemorySegment[capacity];
        for (int c = 0; c < chunks; c++) {
            int first = c * slotsPerChunk;
            int count = Math.min(slotsPerChunk, capacity - first);
            arenas[c] = Arena.ofShared();
            // zero-filled by the arena: each page written once
            MemorySegment chunk = arenas[c].allocate((long) count * slotBytes, 4096);
            for (int i = 0; i < count; i++) {
                slots[first + i] = chunk.asSlice((long) i * slotBytes, slotBytes);
            }
        }
    }

    /**
     * The memory of one slot.
     *
     * @param slot slot index in [0, capacity)
     * @return a segment of exactly {@link #slotBytes()} bytes, the same instance on every call
     * @throws IndexOutOfBoundsException if slot is out of range
     * @throws IllegalStateException     after {@link #close()}
     */
    @Override
    public MemorySegment slot(int slot) {
        if (closed) {
            throw new IllegalStateException("slab memory is closed");
        }
        return slots[slot];
    }

    /** @return bytes per slot */
    @Override
    public int slotBytes() {
        return slotBytes;
    }

    /** @return number of slots */
    @Override
    public int capacity() {
        return capacity;
    }

    /** Frees every chunk; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Arena a : arenas) {
            a.close();
        }
    }
}
