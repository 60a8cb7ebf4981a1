package io.tierkv.natives.runtime;

import io.tierkv.natives.DeviceBuffer;
import io.tierkv.natives.ErrorCode;
import io.tierkv.natives.GpuEvent;
import io.tierkv.natives.GpuException;
import io.tierkv.natives.GpuRuntime;
import io.tierkv.natives.GpuStream;
import io.tierkv.natives.MemoryInfo;
import io.tierkv.natives.PinnedHostBuffer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@link GpuRuntime} over a real runtime library (HIP or CUDA) through {@link RuntimeApi}: every
 * call checks its arguments, makes one runtime call and turns a non-zero code into a
 * {@link GpuException} carrying the API's code, C name and description.
 *
 * <p>Native resources: device buffers are device pointers ({@code malloc}/{@code free}); pinned
 * host buffers are {@code hostMalloc} memory exposed as a segment of a per-buffer shared arena, so
 * that closing the buffer makes the segment inaccessible before {@code hostFree} runs; streams and
 * events are opaque handles. All are registered in {@link OwnedResources} until closed.
 *
 * <p>Out-parameters are allocated in a confined arena per call (these calls run per buffer or per
 * transfer, not per token). Calls use the calling thread's current device, which is device 0 unless
 * the application changes it; choose the GPU with {@code HIP_VISIBLE_DEVICES} or
 * {@code CUDA_VISIBLE_DEVICES}. Streams are created non-blocking.
 *
 * <p>Thread-safety: thread-safe, as the runtimes are.
 */
public final class NativeGpuRuntime implements GpuRuntime {

    /** {@code hipStreamNonBlocking} and {@code cudaStreamNonBlocking}. */
    private static final int STREAM_NON_BLOCKING = 1;

    private final RuntimeApi api;
    private final int deviceCount;
    private final OwnedResources owned;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final long pageBytes;

    private NativeGpuRuntime(RuntimeApi api, int deviceCount) {
        this.api = api;
        this.deviceCount = deviceCount;
        this.owned = new OwnedResources(api.apiName());
        this.pageBytes = io.tierkv.natives.libc.Libc.pageSizeBytes();
    }

    /**
     * Opens the runtime behind {@code api}: asks for the device count and refuses a runtime with
     * none.
     *
     * <p>The count out-parameter is set to 0 before the call, because CUDA's insufficient-driver
     * error (35) returns without writing it.
     *
     * @param api bindings of a loaded library
     * @return the runtime, bound to device 0
     * @throws GpuException with the runtime's code if the count call fails (for example
     *     {@code hipErrorNoDevice} 100, {@code cudaErrorInsufficientDriver} 35), or with the API's
     *     no-device code (100) if the count is 0
     */
    public static NativeGpuRuntime open(RuntimeApi api) {
        Objects.requireNonNull(api, "api");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            count.set(ValueLayout.JAVA_INT, 0, 0);
            int rc = api.getDeviceCount(count);
            if (rc != 0) {
                throw error(api, rc, api.functionName("getDeviceCount") + "(&count) on " + api.libraryName());
            }
            int n = count.get(ValueLayout.JAVA_INT, 0);
            if (n <= 0) {
                throw new GpuException(api.apiName(), 100, api.errorCode(100).cName(),
                        api.functionName("getDeviceCount") + " on " + api.libraryName()
                                + " returned success with count " + n);
            }
            return new NativeGpuRuntime(api, n);
        }
    }

    /**
     * The runtime version the library reports ({@code hipRuntimeGetVersion},
     * {@code cudaRuntimeGetVersion}), for example 50221153 for HIP 5.2 or 12040 for CUDA 12.4.
     *
     * @return the version number
     * @throws GpuException if the call fails
     */
    public int runtimeVersion() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(ValueLayout.JAVA_INT);
            check(api.runtimeGetVersion(v), "runtimeGetVersion", "(&version)");
            return v.get(ValueLayout.JAVA_INT, 0);
        }
    }

    /**
     * Resources this runtime has handed out that are still open; 0 after close.
     *
     * @return the number of open buffers, streams and events
     */
    public int openResources() {
        return owned.size();
    }

    /**
     * The library this runtime calls.
     *
     * @return the name or path it was loaded from
     */
    public String libraryName() {
        return api.libraryName();
    }

    @Override
    public String name() {
        return api.apiName();
    }

    @Override
    public int deviceCount() {
        checkOpen();
        return deviceCount;
    }

    @Override
    public MemoryInfo memoryInfo() {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment free = arena.allocate(ValueLayout.JAVA_LONG);
            MemorySegment total = arena.allocate(ValueLayout.JAVA_LONG);
            check(api.memGetInfo(free, total), "memGetInfo", "(&free, &total)");
            long t = total.get(ValueLayout.JAVA_LONG, 0);
            long f = free.get(ValueLayout.JAVA_LONG, 0);
            return new MemoryInfo(Math.min(f, t), t);
        }
    }

    @Override
    public DeviceBuffer allocateDevice(long bytes) {
        CopyChecks.checkAllocation(bytes);
        checkOpen();
        long address;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            check(api.malloc(out, bytes), "malloc", "(&ptr, " + bytes + " bytes)");
            address = out.get(ValueLayout.ADDRESS, 0).address();
        }
        Buffer buffer = new Buffer(address, bytes);
        register(buffer, OwnedResources.Phase.BUFFER);
        return buffer;
    }

    @Override
    @SuppressWarnings("restricted")
    public PinnedHostBuffer allocatePinnedHost(long bytes) {
        CopyChecks.checkAllocation(bytes);
        checkOpen();
        long address;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            check(api.hostMalloc(out, bytes, 0), "hostMalloc", "(&ptr, " + bytes + " bytes, 0)");
            address = out.get(ValueLayout.ADDRESS, 0).address();
        }
        Arena lifetime = Arena.ofShared();
        MemorySegment segment = MemorySegment.ofAddress(address).reinterpret(bytes, lifetime, null);
        segment.fill((byte) 0); // the driver commits and pins the pages but may hand back reused memory
        Pinned pinned = new Pinned(lifetime, segment, address, bytes);
        register(pinned, OwnedResources.Phase.BUFFER);
        return pinned;
    }

    @Override
    public GpuStream createStream() {
        checkOpen();
        MemorySegment handle;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            // Non-blocking: no implicit synchronisation with the legacy default stream that other
            // libraries in the process (a model runtime, PyTorch) may use.
            check(api.streamCreateWithFlags(out, STREAM_NON_BLOCKING), "streamCreateWithFlags",
                    "(&stream, NonBlocking)");
            handle = out.get(ValueLayout.ADDRESS, 0);
        }
        Stream stream = new Stream(handle);
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
        return api.apiName() + " runtime (" + api.libraryName() + ", " + deviceCount + " device(s))";
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

    private void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException(api.apiName() + " runtime is closed");
        }
    }

    private void check(int rc, String function, String arguments) {
        if (rc != 0) {
            throw error(api, rc, api.functionName(function) + arguments);
        }
    }

    /**
     * Builds the exception for a failed call: the enum's C name, else the library's own name for
     * the code, and the library's description.
     */
    private static GpuException error(RuntimeApi api, int rc, String call) {
        ErrorCode known = api.errorCode(rc);
        String name = known.code() == rc ? known.cName() : cString(api.getErrorName(rc), "unknown error " + rc);
        String description = cString(api.getErrorString(rc), "");
        return new GpuException(api.apiName(), rc, name, description.isEmpty() ? call : call + ": " + description);
    }

    private static String cString(MemorySegment s, String fallback) {
        return s == null || s.equals(MemorySegment.NULL) ? fallback : s.getString(0);
    }

    private Buffer own(DeviceBuffer buffer, String field) {
        Objects.requireNonNull(buffer, field);
        if (!(buffer instanceof Buffer b) || b.owner() != this) {
            throw new IllegalArgumentException(field + ": a buffer of another runtime (" + buffer
                    + "; expected one of " + this + ")");
        }
        return b;
    }

    private final class Buffer implements DeviceBuffer {
        private final long address;
        private final long byteSize;
        private final AtomicBoolean bufferClosed = new AtomicBoolean();

        Buffer(long address, long byteSize) {
            this.address = address;
            this.byteSize = byteSize;
        }

        NativeGpuRuntime owner() {
            return NativeGpuRuntime.this;
        }

        @Override
        public long address() {
            checkBufferOpen();
            return address;
        }

        @Override
        public long byteSize() {
            return byteSize;
        }

        @Override
        public Optional<MemorySegment> hostView() {
            checkBufferOpen();
            return Optional.empty();
        }

        @Override
        public boolean isClosed() {
            return bufferClosed.get();
        }

        void checkBufferOpen() {
            if (bufferClosed.get()) {
                throw new IllegalStateException("device buffer of " + byteSize + " bytes is closed");
            }
        }

        @Override
        public void close() {
            if (bufferClosed.compareAndSet(false, true)) {
                owned.remove(this);
                check(api.free(MemorySegment.ofAddress(address)), "free",
                        "(0x" + Long.toHexString(address) + ", " + byteSize + " bytes)");
            }
        }

        @Override
        public String toString() {
            return api.apiName() + " device buffer 0x" + Long.toHexString(address) + " (" + byteSize + " bytes)";
        }
    }

    private final class Pinned implements PinnedHostBuffer {
        private final Arena lifetime;
        private final MemorySegment segment;
        private final long address;
        private final long requestedBytes;
        private final AtomicBoolean pinnedClosed = new AtomicBoolean();

        Pinned(Arena lifetime, MemorySegment segment, long address, long requestedBytes) {
            this.lifetime = lifetime;
            this.segment = segment;
            this.address = address;
            this.requestedBytes = requestedBytes;
        }

        @Override
        public MemorySegment segment() {
            return segment;
        }

        @Override
        public long requestedBytes() {
            return requestedBytes;
        }

        @Override
        public long pinnedBytes() {
            return (requestedBytes + pageBytes - 1) & -pageBytes;
        }

        @Override
        public boolean isClosed() {
            return pinnedClosed.get();
        }

        @Override
        public void close() {
            if (pinnedClosed.compareAndSet(false, true)) {
                try {
                    lifetime.close();
                } catch (IllegalStateException inUse) {
                    pinnedClosed.set(false);
                    throw inUse;
                }
                owned.remove(this);
                check(api.hostFree(MemorySegment.ofAddress(address)), "hostFree",
                        "(0x" + Long.toHexString(address) + ", " + requestedBytes + " bytes)");
            }
        }
    }

    private final class Stream implements GpuStream {
        private final MemorySegment handle;
        private final AtomicBoolean streamClosed = new AtomicBoolean();

        Stream(MemorySegment handle) {
            this.handle = handle;
        }

        private void checkStreamOpen() {
            if (streamClosed.get()) {
                throw new IllegalStateException(api.apiName() + " stream is closed");
            }
        }

        @Override
        public void copyHostToDevice(MemorySegment src, long srcOffset, DeviceBuffer dst, long dstOffset,
                long bytes) {
            CopyChecks.checkBytes(bytes);
            Buffer d = own(dst, "dst");
            CopyChecks.checkHostSegment("src", src, srcOffset, bytes, false);
            CopyChecks.checkRange("dstOffset", dstOffset, bytes, "dst.byteSize()", d.byteSize);
            checkStreamOpen();
            d.checkBufferOpen();
            if (bytes > 0) {
                check(api.memcpyAsync(MemorySegment.ofAddress(d.address + dstOffset),
                        MemorySegment.ofAddress(src.address() + srcOffset), bytes, 1, handle),
                        "memcpyAsync", "(dst 0x" + Long.toHexString(d.address + dstOffset) + ", src, " + bytes
                                + " bytes, HostToDevice)");
            }
        }

        @Override
        public void copyDeviceToHost(DeviceBuffer src, long srcOffset, MemorySegment dst, long dstOffset,
                long bytes) {
            CopyChecks.checkBytes(bytes);
            Buffer s = own(src, "src");
            CopyChecks.checkRange("srcOffset", srcOffset, bytes, "src.byteSize()", s.byteSize);
            CopyChecks.checkHostSegment("dst", dst, dstOffset, bytes, true);
            checkStreamOpen();
            s.checkBufferOpen();
            if (bytes > 0) {
                check(api.memcpyAsync(MemorySegment.ofAddress(dst.address() + dstOffset),
                        MemorySegment.ofAddress(s.address + srcOffset), bytes, 2, handle),
                        "memcpyAsync", "(dst, src 0x" + Long.toHexString(s.address + srcOffset) + ", " + bytes
                                + " bytes, DeviceToHost)");
            }
        }

        @Override
        public void copyDeviceToDevice(DeviceBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset,
                long bytes) {
            CopyChecks.checkBytes(bytes);
            Buffer s = own(src, "src");
            Buffer d = own(dst, "dst");
            CopyChecks.checkRange("srcOffset", srcOffset, bytes, "src.byteSize()", s.byteSize);
            CopyChecks.checkRange("dstOffset", dstOffset, bytes, "dst.byteSize()", d.byteSize);
            if (s == d) {
                CopyChecks.checkNoOverlap(srcOffset, dstOffset, bytes);
            }
            checkStreamOpen();
            s.checkBufferOpen();
            d.checkBufferOpen();
            if (bytes > 0) {
                long to = d.address + dstOffset;
                long from = s.address + srcOffset;
                check(api.memcpyAsync(MemorySegment.ofAddress(to), MemorySegment.ofAddress(from), bytes, 3, handle),
                        "memcpyAsync", "(dst 0x" + Long.toHexString(to) + ", src 0x" + Long.toHexString(from)
                                + ", " + bytes + " bytes, DeviceToDevice)");
            }
        }

        @Override
        public GpuEvent record() {
            checkStreamOpen();
            MemorySegment event;
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
                check(api.eventCreate(out), "eventCreate", "(&event)");
                event = out.get(ValueLayout.ADDRESS, 0);
            }
            int rc = api.eventRecord(event, handle);
            if (rc != 0) {
                api.eventDestroy(event);
                check(rc, "eventRecord", "(event, stream)");
            }
            Event e = new Event(event);
            register(e, OwnedResources.Phase.EVENT);
            return e;
        }

        @Override
        public void synchronize() {
            checkStreamOpen();
            check(api.streamSynchronize(handle), "streamSynchronize", "(stream)");
        }

        @Override
        public void close() {
            if (streamClosed.compareAndSet(false, true)) {
                owned.remove(this);
                int sync = api.streamSynchronize(handle);
                check(api.streamDestroy(handle), "streamDestroy", "(stream)");
                check(sync, "streamSynchronize", "(stream) before destroy");
            }
        }
    }

    private final class Event implements GpuEvent {
        private final MemorySegment handle;
        private final AtomicBoolean eventClosed = new AtomicBoolean();

        Event(MemorySegment handle) {
            this.handle = handle;
        }

        private void checkEventOpen() {
            if (eventClosed.get()) {
                throw new IllegalStateException(api.apiName() + " event is closed");
            }
        }

        @Override
        public boolean isComplete() {
            checkEventOpen();
            int rc = api.eventQuery(handle);
            if (rc == 0) {
                return true;
            }
            if (rc == 600) {
                return false;
            }
            check(rc, "eventQuery", "(event)");
            return false;
        }

        @Override
        public void synchronize() {
            checkEventOpen();
            check(api.eventSynchronize(handle), "eventSynchronize", "(event)");
        }

        @Override
        public float elapsedMillisSince(GpuEvent start) {
            Objects.requireNonNull(start, "start");
            if (!(start instanceof Event s) || s.owner() != NativeGpuRuntime.this) {
                throw new IllegalArgumentException("start: an event of another runtime (" + start + ")");
            }
            s.synchronize();
            synchronize();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment ms = arena.allocate(ValueLayout.JAVA_FLOAT);
                check(api.eventElapsedTime(ms, s.handle, handle), "eventElapsedTime", "(&ms, start, stop)");
                return ms.get(ValueLayout.JAVA_FLOAT, 0);
            }
        }

        NativeGpuRuntime owner() {
            return NativeGpuRuntime.this;
        }

        @Override
        public void close() {
            if (eventClosed.compareAndSet(false, true)) {
                owned.remove(this);
                check(api.eventDestroy(handle), "eventDestroy", "(event)");
            }
        }
    }
}
