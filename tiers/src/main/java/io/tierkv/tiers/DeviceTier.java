package io.tierkv.tiers;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.core.pool.KeptSlices;
import io.tierkv.core.pool.SlotMemory;
import io.tierkv.natives.DeviceBuffer;
import io.tierkv.natives.GpuEvent;
import io.tierkv.natives.GpuRuntime;
import io.tierkv.natives.GpuStream;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The device tier's slots: fixed-size slots carved from a few large device buffers of a
 * {@link GpuRuntime}, and the stream through which blocks are copied to and from host memory.
 *
 * <pre>
 * buffer c: [slot c*k][slot c*k+1] ... [slot c*k+k-1]     k = slots per buffer (at most 1 GiB each)
 * </pre>
 *
 * <p>Runtimes write and read block bytes through {@link #slot(int)}, which needs host-visible
 * device memory (the emulated device). On a real GPU the slots' device addresses
 * ({@link #deviceAddress(int)}) are what kernels read; host-side writes into them are not offered.
 * Copies are enqueued on one stream under this object's monitor and complete asynchronously; the
 * returned event tells when: the stream's (for waiting only; the moves time themselves), or
 * {@link #DONE} where the copy had completed by the time its call returned (the emulated device
 * runs copies inline on an idle stream), which spares the runtime an event. Thread-safe.
 */
public final class DeviceTier implements SlotMemory, AutoCloseable {

    private static final long MAX_BUFFER_BYTES = 1L << 30;

    /**
     * What a copy returns when it completed within its call ({@link GpuStream#recordIfPending()}
     * empty): complete, of no runtime, shared; closing it does nothing.
     */
    static final GpuEvent DONE = new GpuEvent() {
        @Override
        public boolean isComplete() {
            return true;
        }

        @Override
        public void synchronize() {
        }

        @Override
        public float elapsedMillisSince(GpuEvent start) {
            throw new IllegalArgumentException("no timing: the copy completed within its call (DeviceTier.DONE)");
        }

        @Override
        public void close() {
        }

        @Override
        public String toString() {
            return "DeviceTier.DONE";
        }
    };

    private final GpuRuntime runtime;
    private final int capacity;
    private final int slotBytes;
    private final int slotsPerBuffer;
    @GuardedBy("this") private final List<DeviceBuffer> buffers = new ArrayList<>();
    /** Per buffer, its host-visible memory (the emulated device), or null on a real GPU. */
    private final MemorySegment[] bufferViews;
    /** Slot views made by {@link #slot(int)}, kept for reuse. */
    private final KeptSlices keptViews;
    @GuardedBy("this") private final GpuStream stream;

    /**
     * Allocates {@code capacity x slotBytes} bytes of device memory and writes none of it: a GPU's
     * driver commits its memory; the emulated device's buffers read as zero and are committed page
     * by page on first touch (issue 19 part 3: a fill here committed every page at build).
     *
     * @param runtime   the GPU runtime (or emulated device)
     * @param capacity  slots, >= 1
     * @param slotBytes bytes per slot (bytesPerBlock), >= 1
     * @throws io.tierkv.natives.GpuException if the device cannot provide the memory
     */
    public DeviceTier(GpuRuntime runtime, int capacity, int slotBytes) {
        this.runtime = runtime;
        this.capacity = capacity;
        this.slotBytes = slotBytes;
        this.slotsPerBuffer = (int) Math.max(1, Math.min(capacity, MAX_BUFFER_BYTES / slotBytes));
        this.bufferViews = new MemorySegment[(capacity + slotsPerBuffer - 1) / slotsPerBuffer];
        this.keptViews = new KeptSlices(capacity);
        try {
            for (int first = 0; first < capacity; first += slotsPerBuffer) {
                int n = Math.min(slotsPerBuffer, capacity - first);
                DeviceBuffer b = runtime.allocateDevice((long) n * slotBytes);
                buffers.add(b);
                // zero already; not touched, so not committed
                bufferViews[first / slotsPerBuffer] = b.hostView().orElse(null);
            }
            this.stream = runtime.createStream();
        } catch (RuntimeException e) {
            buffers.forEach(DeviceBuffer::close);
            throw e;
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>A view of the slot's host-visible memory, made on first use and kept in a direct-mapped
     * table of at most 4,096 views ({@link KeptSlices}): a tier of up to 4,096 slots keeps one per
     * slot; in a larger one, a reader over slots distinct modulo 4,096 allocates nothing, and one
     * over slots that share an entry makes a 40-byte view per miss.
     *
     * @throws IndexOutOfBoundsException if slot is outside [0, capacity)
     * @throws IllegalStateException     if the device memory is not host-visible (a real GPU)
     */
    @Override
    public MemorySegment slot(int slot) {
        java.util.Objects.checkIndex(slot, capacity);
        MemorySegment buffer = bufferViews[slot / slotsPerBuffer];
        if (buffer == null) {
            throw new IllegalStateException(runtime.name() + " device memory is not host-visible: slot " + slot
                    + " is read by kernels through its device address, not from Java");
        }
        return keptViews.slice(slot, buffer, (long) (slot % slotsPerBuffer) * slotBytes, slotBytes);
    }

    /**
     * Returns a slot's device address.
     *
     * @param slot a slot
     * @return the slot's device address, for a block table handed to a kernel
     */
    public synchronized long deviceAddress(int slot) {
        return buffers.get(slot / slotsPerBuffer).address() + (long) (slot % slotsPerBuffer) * slotBytes;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public int slotBytes() {
        return slotBytes;
    }

    /**
     * Enqueues a device-to-host copy of a whole slot into host memory at an offset (a host slot of
     * one pinned buffer, addressed without a segment object per slot).
     *
     * @param slot      source slot
     * @param dst       host memory
     * @param dstOffset first byte written, with {@code dstOffset + slotBytes <= dst.byteSize()}
     * @return an event that completes with the copy; close it
     */
    public synchronized GpuEvent copyToHost(int slot, MemorySegment dst, long dstOffset) {
        stream.copyDeviceToHost(buffer(slot), offset(slot), dst, dstOffset, slotBytes);
        return stream.recordIfPending().orElse(DONE);
    }

    /**
     * Enqueues a host-to-device copy of a whole slot from host memory at an offset.
     *
     * @param src       host memory
     * @param srcOffset first byte read, with {@code srcOffset + slotBytes <= src.byteSize()}
     * @param slot      destination slot
     * @return an event that completes with the copy; close it
     */
    public synchronized GpuEvent copyFromHost(MemorySegment src, long srcOffset, int slot) {
        stream.copyHostToDevice(src, srcOffset, buffer(slot), offset(slot), slotBytes);
        return stream.recordIfPending().orElse(DONE);
    }

    @GuardedBy("this")
    private DeviceBuffer buffer(int slot) {
        return buffers.get(slot / slotsPerBuffer);
    }

    private long offset(int slot) {
        return (long) (slot % slotsPerBuffer) * slotBytes;
    }

    /** Waits for queued copies, then frees the stream and every buffer; idempotent. */
    @Override
    public synchronized void close() {
        if (stream != null) {
            stream.close();
        }
        buffers.forEach(DeviceBuffer::close);
        buffers.clear();
    }

    /**
     * Waits for an event for at most {@code timeoutNanos} from this call: returns at once, reading
     * no clock, if it is complete already (a copy the emulated device ran inline); else spins for
     * the first 50 us (a block copy is tens to hundreds of microseconds), then yields until 1 ms,
     * then parks in 20 us steps.
     *
     * @param event        the event
     * @param timeoutNanos how long to wait, {@code > 0}
     * @return whether the event completed in time
     */
    static boolean await(GpuEvent event, long timeoutNanos) {
        if (event.isComplete()) {
            return true;
        }
        long start = System.nanoTime();
        while (!event.isComplete()) {
            long now = System.nanoTime();
            if (now - start >= timeoutNanos) {
                return false;
            }
            long waited = now - start;
            if (waited < 50_000) {
                Thread.onSpinWait();
            } else if (waited < 1_000_000) {
                Thread.yield();
            } else {
                java.util.concurrent.locks.LockSupport.parkNanos(20_000);
            }
        }
        return true;
    }
}
