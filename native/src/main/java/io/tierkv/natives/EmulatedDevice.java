package io.tierkv.natives;

import io.tierkv.natives.emulated.CopyQueue;
import io.tierkv.natives.emulated.EmulatedError;
import io.tierkv.natives.runtime.CopyChecks;
import io.tierkv.natives.runtime.OwnedResources;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link GpuRuntime} whose "device memory" is host memory, so the tiers run the same code path on
 * a machine without a GPU: a fixed capacity, asynchronous copies on per-stream worker threads,
 * stream order and events with completion times.
 *
 * <p>Memory: each device buffer is a page-aligned segment of its own shared arena, zero, reserved
 * at allocation and committed page by page on first touch ({@link PoolMemory}, which says why; a
 * first touch of memory left idle on these VMs is slow, so allocate pools once and keep them). Allocations
 * beyond the capacity throw {@link GpuException} with {@code emulatedErrorOutOfMemory} (code 2,
 * {@link GpuException#isOutOfMemory()}). {@link DeviceBuffer#hostView()} exposes the segment.
 * Pinned host memory comes from {@link HostMemory} and does not count against the capacity.
 *
 * <p>Streams: each has a worker thread and a bounded queue ({@link CopyQueue}); copies return at
 * once and run in order; {@link GpuStream#record()} returns an event stamped with
 * {@link System#nanoTime()} when the worker reaches it; {@link GpuStream#recordIfPending()} returns
 * nothing when every task queued has completed, else an untimed event that queues nothing and
 * waits for the last task queued. A copy or event submitted while its stream
 * is idle (nothing queued or running, no failure) and copies are not stalled runs on the calling
 * thread instead, in stream order ({@link CopyQueue#runOrSubmit}): the call returns with the copy
 * done and an event recorded after it complete, as a real asynchronous copy may be complete
 * before its call returns. This spares an idle stream the hand-off to its worker (about 100 us on
 * these machines, far more than a 64 KiB copy). A copy whose host segment was closed
 * before it ran fails the stream with {@code emulatedErrorIllegalAddress} (700), reported by the
 * next wait. Freeing a device buffer waits for the copies queued on it (as {@code hipFree} waits for
 * the device), so a worker never touches freed memory.
 *
 * <p>Thread-safety: thread-safe.
 */
public final class EmulatedDevice implements GpuRuntime {

    private static final AtomicInteger DEVICE_IDS = new AtomicInteger();

    private final long capacityBytes;
    private final AtomicLong usedBytes = new AtomicLong();
    private final OwnedResources owned = new OwnedResources("EMULATED");
    private final AtomicBoolean closed = new AtomicBoolean();
    private final int deviceId = DEVICE_IDS.incrementAndGet();
    private final AtomicInteger streamIds = new AtomicInteger();
    /** Events recorded and not yet closed; the device's close closes the rest (see {@code Event}). */
    private final AtomicInteger openEvents = new AtomicInteger();

    /**
     * Creates a device with half of this machine's physical memory as capacity (from
     * {@code /proc/meminfo}; 1 GiB where that cannot be read). Nothing is allocated until
     * {@link #allocateDevice(long)}.
     */
    public EmulatedDevice() {
        this(defaultCapacityBytes());
    }

    /**
     * Creates a device with a fixed capacity. Nothing is allocated until
     * {@link #allocateDevice(long)}.
     *
     * @param capacityBytes total device memory in bytes, {@code > 0}
     * @throws IllegalArgumentException if {@code capacityBytes <= 0}
     */
    public EmulatedDevice(long capacityBytes) {
        if (capacityBytes <= 0) {
            throw new IllegalArgumentException("capacityBytes: " + capacityBytes + " (expected > 0)");
        }
        this.capacityBytes = capacityBytes;
    }

    /**
     * The default capacity: half of {@code MemTotal} in {@code /proc/meminfo}, else 1 GiB.
     *
     * @return bytes
     */
    public static long defaultCapacityBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    String kib = line.substring("MemTotal:".length()).replace("kB", "").trim();
                    return Long.parseLong(kib) * 1024 / 2;
                }
            }
        } catch (IOException | NumberFormatException | SecurityException e) {
            // fall through to the fixed default
        }
        return 1L << 30;
    }

    /**
     * The fixed capacity.
     *
     * @return bytes
     */
    public long capacityBytes() {
        return capacityBytes;
    }

    /**
     * Device bytes allocated and not yet freed.
     *
     * @return bytes, {@code 0 <= used <= capacity}
     */
    public long usedBytes() {
        return usedBytes.get();
    }

    /**
     * Buffers, streams and events handed out and still open; 0 after close.
     *
     * @return the number of open resources
     */
    public int openResources() {
        return owned.size() + (closed.get() ? 0 : openEvents.get());
    }

    @Override
    public String name() {
        return "EMULATED";
    }

    @Override
    public int deviceCount() {
        checkOpen();
        return 1;
    }

    /** {@return true: this device's buffers are host memory} */
    @Override
    public boolean deviceMemoryIsHostMemory() {
        return true;
    }

    @Override
    public MemoryInfo memoryInfo() {
        checkOpen();
        return new MemoryInfo(capacityBytes - usedBytes.get(), capacityBytes);
    }

    @Override
    public DeviceBuffer allocateDevice(long bytes) {
        CopyChecks.checkAllocation(bytes);
        checkOpen();
        long used;
        do {
            used = usedBytes.get();
            if (bytes > capacityBytes - used) {
                EmulatedError oom = EmulatedError.OUT_OF_MEMORY;
                throw new GpuException("EMULATED", oom.code(), oom.cName(), "allocateDevice(" + bytes
                        + " bytes): capacity " + capacityBytes + " bytes, used " + used + " bytes, free "
                        + (capacityBytes - used) + " bytes");
            }
        } while (!usedBytes.compareAndSet(used, used + bytes));
        Buffer buffer;
        try {
            Arena arena = Arena.ofShared();
            try {
                buffer = new Buffer(arena, PoolMemory.allocate(arena, bytes, 4096)); // reserved; committed on first touch
            } catch (OutOfMemoryError | RuntimeException e) {
                arena.close();
                throw e;
            }
        } catch (OutOfMemoryError e) {
            usedBytes.addAndGet(-bytes);
            EmulatedError oom = EmulatedError.OUT_OF_MEMORY;
            GpuException g = new GpuException("EMULATED", oom.code(), oom.cName(),
                    "allocateDevice(" + bytes + " bytes): the host refused the memory: " + e.getMessage());
            g.initCause(e);
            throw g;
        }
        register(buffer, OwnedResources.Phase.BUFFER);
        return buffer;
    }

    @Override
    public PinnedHostBuffer allocatePinnedHost(long bytes) {
        CopyChecks.checkAllocation(bytes);
        checkOpen();
        AtomicReferenceHolder holder = new AtomicReferenceHolder();
        PinnedHostBuffer buffer = HostMemory.allocatePinned(bytes, () -> owned.remove(holder.buffer));
        holder.buffer = buffer;
        register(buffer, OwnedResources.Phase.BUFFER);
        return buffer;
    }

    @Override
    public GpuStream createStream() {
        checkOpen();
        Stream stream = new Stream(new CopyQueue(
                "tierkv-emulated-" + deviceId + "-stream-" + streamIds.incrementAndGet(), CopyQueue.DEFAULT_CAPACITY));
        register(stream, OwnedResources.Phase.STREAM);
        return stream;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            owned.closeAll();
        }
    }

    @Override
    public String toString() {
        return "EMULATED device #" + deviceId + " (" + usedBytes.get() + " of " + capacityBytes + " bytes used)";
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException("EMULATED device #" + deviceId + " is closed");
        }
    }

    private void register(AutoCloseable resource, OwnedResources.Phase phase) {
        try {
            owned.add(resource, phase);
        } catch (IllegalStateException e) {
            try {
                resource.close();
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private Buffer own(DeviceBuffer buffer, String field) {
        Objects.requireNonNull(buffer, field);
        if (!(buffer instanceof Buffer b) || b.device() != this) {
            throw new IllegalArgumentException(field + ": a buffer of another runtime (" + buffer
                    + "; expected one of " + this + ")");
        }
        return b;
    }

    /** Lets the pinned buffer's close callback name the buffer created after the callback. */
    private static final class AtomicReferenceHolder {
        volatile PinnedHostBuffer buffer;
    }

    private final class Buffer implements DeviceBuffer {
        private final Arena arena;
        private final MemorySegment segment;
        private final AtomicBoolean bufferClosed = new AtomicBoolean();
        /**
         * Copies that hold this buffer. A copy counts itself before it looks at {@code bufferClosed},
         * and {@link #close()} sets that flag before it looks at the count (both volatile), so a copy
         * either sees the close and backs out or is seen and waited for; only a release that
         * ends the last copy of a closing buffer takes this object's monitor, to wake the close.
         */
        private final AtomicInteger pendingCopies = new AtomicInteger();

        Buffer(Arena arena, MemorySegment segment) {
            this.arena = arena;
            this.segment = segment;
        }

        EmulatedDevice device() {
            return EmulatedDevice.this;
        }

        /** Counts a copy that will touch this buffer; the copy's release calls {@link #release()}. */
        MemorySegment acquire() {
            pendingCopies.incrementAndGet();
            if (bufferClosed.get()) {
                release();
                throw new IllegalStateException("device buffer of " + segment.byteSize() + " bytes is closed");
            }
            return segment;
        }

        void release() {
            if (pendingCopies.decrementAndGet() == 0 && bufferClosed.get()) {
                synchronized (this) {
                    notifyAll();
                }
            }
        }

        @Override
        public long address() {
            checkBufferOpen();
            return segment.address();
        }

        @Override
        public long byteSize() {
            return segment.byteSize();
        }

        @Override
        public Optional<MemorySegment> hostView() {
            checkBufferOpen();
            return Optional.of(segment);
        }

        @Override
        public boolean isClosed() {
            return bufferClosed.get();
        }

        private void checkBufferOpen() {
            if (bufferClosed.get()) {
                throw new IllegalStateException("device buffer of " + segment.byteSize() + " bytes is closed");
            }
        }

        @Override
        public void close() {
            if (!bufferClosed.compareAndSet(false, true)) {
                return;
            }
            boolean interrupted = false;
            synchronized (this) {
                while (pendingCopies.get() > 0) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            arena.close();
            usedBytes.addAndGet(-segment.byteSize());
            owned.remove(this);
        }

        @Override
        public String toString() {
            return "EMULATED device buffer 0x" + Long.toHexString(segment.address()) + " (" + segment.byteSize()
                    + " bytes)";
        }
    }

    /**
     * Holds every copy that starts from now on until {@link #resumeCopies()}: emulates a DMA
     * engine that stops answering, so that timeouts, cancellation and late completions can be
     * exercised. Copies already running finish; copies submitted meanwhile are queued (never run
     * inline); events recorded after a held copy stay incomplete.
     */
    public void stallCopies() {
        stall.compareAndSet(null, new java.util.concurrent.CountDownLatch(1));
    }

    /** Lets held copies (see {@link #stallCopies()}) run; a late completion then arrives. */
    public void resumeCopies() {
        java.util.concurrent.CountDownLatch held = stall.getAndSet(null);
        if (held != null) {
            held.countDown();
        }
    }

    private final java.util.concurrent.atomic.AtomicReference<java.util.concurrent.CountDownLatch> stall =
            new java.util.concurrent.atomic.AtomicReference<>();

    /** A copy between two segments; releases the device buffers it holds when done or skipped. */
    private record Copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes,
            Buffer first, Buffer second,
            java.util.concurrent.atomic.AtomicReference<java.util.concurrent.CountDownLatch> stall)
            implements CopyQueue.Task {
        @Override
        public void run() {
            java.util.concurrent.CountDownLatch held = stall.get();
            while (held != null) {
                try {
                    held.await();
                    held = stall.get();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("stalled copy abandoned: interrupted before it ran", e);
                }
            }
            MemorySegment.copy(src, srcOffset, dst, dstOffset, bytes);
        }

        @Override
        public boolean runInline() {
            if (stall.get() != null) {
                return false; // held copies wait on the worker, behind which later tasks queue
            }
            MemorySegment.copy(src, srcOffset, dst, dstOffset, bytes);
            return true;
        }

        @Override
        public void release() {
            first.release();
            if (second != null) {
                second.release();
            }
        }
    }

    private final class Stream implements GpuStream {
        private final CopyQueue queue;
        private final AtomicBoolean streamClosed = new AtomicBoolean();

        Stream(CopyQueue queue) {
            this.queue = queue;
        }

        private void checkStreamOpen() {
            if (streamClosed.get()) {
                throw new IllegalStateException("EMULATED stream is closed");
            }
        }

        @Override
        public void copyHostToDevice(MemorySegment src, long srcOffset, DeviceBuffer dst, long dstOffset,
                long bytes) {
            CopyChecks.checkBytes(bytes);
            Buffer d = own(dst, "dst");
            CopyChecks.checkHostSegment("src", src, srcOffset, bytes, false);
            CopyChecks.checkRange("dstOffset", dstOffset, bytes, "dst.byteSize()", d.byteSize());
            checkStreamOpen();
            MemorySegment to = d.acquire();
            if (stall.get() == null && queue.tryCopyInline(src, srcOffset, to, dstOffset, bytes) >= 0) {
                d.release(); // ran inline, with no task object
            } else {
                queue.runOrSubmit(new Copy(src, srcOffset, to, dstOffset, bytes, d, null, stall));
            }
        }

        @Override
        public void copyDeviceToHost(DeviceBuffer src, long srcOffset, MemorySegment dst, long dstOffset,
                long bytes) {
            CopyChecks.checkBytes(bytes);
            Buffer s = own(src, "src");
            CopyChecks.checkRange("srcOffset", srcOffset, bytes, "src.byteSize()", s.byteSize());
            CopyChecks.checkHostSegment("dst", dst, dstOffset, bytes, true);
            checkStreamOpen();
            MemorySegment from = s.acquire();
            if (stall.get() == null && queue.tryCopyInline(from, srcOffset, dst, dstOffset, bytes) >= 0) {
                s.release(); // as above
            } else {
                queue.runOrSubmit(new Copy(from, srcOffset, dst, dstOffset, bytes, s, null, stall));
            }
        }

        @Override
        public void copyDeviceToDevice(DeviceBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset,
                long bytes) {
            CopyChecks.checkBytes(bytes);
            Buffer s = own(src, "src");
            Buffer d = own(dst, "dst");
            CopyChecks.checkRange("srcOffset", srcOffset, bytes, "src.byteSize()", s.byteSize());
            CopyChecks.checkRange("dstOffset", dstOffset, bytes, "dst.byteSize()", d.byteSize());
            if (s == d) {
                CopyChecks.checkNoOverlap(srcOffset, dstOffset, bytes);
            }
            checkStreamOpen();
            MemorySegment from = s.acquire();
            MemorySegment to;
            try {
                to = d.acquire();
            } catch (IllegalStateException e) {
                s.release();
                throw e;
            }
            queue.runOrSubmit(new Copy(from, srcOffset, to, dstOffset, bytes, s, d, stall));
        }

        @Override
        public GpuEvent record() {
            checkStreamOpen();
            TimeStamp stamp = new TimeStamp();
            return new Event(queue, queue.runOrSubmit(stamp), stamp);
        }

        /**
         * {@inheritDoc} Reads no clock and queues nothing: empty when every task queued so far has
         * finished and none failed, else an untimed event for the last task queued.
         */
        @Override
        public Optional<GpuEvent> recordIfPending() {
            checkStreamOpen();
            long seq = queue.submittedSeq();
            if (queue.finishedCleanly(seq)) {
                return Optional.empty();
            }
            return Optional.of(new Event(queue, seq, null));
        }

        @Override
        public void synchronize() {
            checkStreamOpen();
            queue.awaitAll();
        }

        @Override
        public void close() {
            if (streamClosed.compareAndSet(false, true)) {
                queue.close();
                owned.remove(this);
            }
        }
    }

    /**
     * A point in a stream: complete once its queue has finished task {@code seq}. A timed event
     * ({@link GpuStream#record()}) is a marker task of its own that stamps the time it runs; an
     * untimed one ({@link GpuStream#recordIfPending()}) queues nothing and takes the number of the
     * last task queued, which it completes with (or fails with, as the marker after it would).
     * Events hold no native resource, so the device counts them ({@code openEvents}) instead of
     * registering each one, and its close closes them all: an event of a closed device throws on
     * use as a closed event does.
     */
    private final class Event implements GpuEvent {
        private static final VarHandle CLOSED;

        static {
            try {
                CLOSED = MethodHandles.lookup().findVarHandle(Event.class, "eventClosed", boolean.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final CopyQueue queue;
        private final long seq;
        /** The completion stamp, or null for an untimed event. */
        private final TimeStamp stamp;
        private volatile boolean eventClosed;

        Event(CopyQueue queue, long seq, TimeStamp stamp) {
            this.queue = queue;
            this.seq = seq;
            this.stamp = stamp;
            openEvents.incrementAndGet();
        }

        EmulatedDevice device() {
            return EmulatedDevice.this;
        }

        private void checkEventOpen() {
            if (eventClosed || closed.get()) {
                throw new IllegalStateException("EMULATED event is closed");
            }
        }

        @Override
        public boolean isComplete() {
            checkEventOpen();
            return queue.isDone(seq);
        }

        @Override
        public void synchronize() {
            checkEventOpen();
            queue.await(seq);
        }

        @Override
        public float elapsedMillisSince(GpuEvent start) {
            Objects.requireNonNull(start, "start");
            if (!(start instanceof Event s) || s.device() != EmulatedDevice.this) {
                throw new IllegalArgumentException("start: an event of another runtime (" + start + ")");
            }
            if (s.stamp == null || stamp == null) {
                throw new IllegalArgumentException((s.stamp == null ? "start" : "this event")
                        + ": recorded without timing (recordIfPending); expected an event from record()");
            }
            s.synchronize();
            synchronize();
            return (stamp.nanos - s.stamp.nanos) / 1e6f;
        }

        @Override
        public void close() {
            if (CLOSED.compareAndSet(this, false, true)) {
                openEvents.decrementAndGet();
            }
        }
    }
}
