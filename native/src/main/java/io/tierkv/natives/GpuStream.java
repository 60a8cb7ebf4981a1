package io.tierkv.natives;

import java.lang.foreign.MemorySegment;
import java.util.Optional;

/**
 * An ordered queue of copies on one device ({@code hipStream_t}, {@code cudaStream_t}, or a worker
 * thread on the emulated device). Copies are queued and return at once; they run in queue order,
 * and {@link #record()} marks a point whose completion can be awaited.
 *
 * <p>Lifetime of the bytes: a queued copy reads or writes its host segment and device buffer when
 * it runs, later than the call. The caller keeps both open and unchanged (source) or unread
 * (destination) until an event recorded after the copy completes. Host segments must be native
 * (not heap arrays); pinned segments from {@link GpuRuntime#allocatePinnedHost(long)} copy fastest,
 * pageable ones may make the call wait for the copy.
 *
 * <p>Errors: argument errors throw {@link IllegalArgumentException} (messages name the field, the
 * value and the bound) and nothing is queued. A copy that fails while running makes the stream
 * fail: later waits ({@link #synchronize()}, {@link GpuEvent#synchronize()}) throw
 * {@link GpuException}.
 *
 * <p>Thread-safety: safe to use from several threads; the order between threads is the order in
 * which their calls returned.
 */
public interface GpuStream extends AutoCloseable {

    /**
     * Queues a copy of {@code bytes} from {@code src} at {@code srcOffset} into {@code dst} at
     * {@code dstOffset}. Taking the host offset, rather than a slice, lets a caller copy any slot
     * of one large pinned buffer without a segment object per slot or per call.
     *
     * @param src native host segment
     * @param srcOffset first source byte, {@code >= 0}, with {@code srcOffset + bytes <= src.byteSize()}
     * @param dst destination buffer of the same runtime
     * @param dstOffset first destination byte, {@code >= 0}
     * @param bytes bytes to copy, {@code >= 0}, with {@code dstOffset + bytes <= dst.byteSize()}
     * @throws IllegalArgumentException for a heap segment, a buffer of another runtime, or a range
     *     out of bounds
     * @throws IllegalStateException if the stream, buffer or segment is closed
     * @throws GpuException if the runtime refuses the copy
     */
    void copyHostToDevice(MemorySegment src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes);

    /**
     * Queues a copy of {@code bytes} from the start of {@code src} into {@code dst} at
     * {@code dstOffset}: {@link #copyHostToDevice(MemorySegment, long, DeviceBuffer, long, long)}
     * with a source offset of 0.
     *
     * @param src native host segment, at least {@code bytes} long
     * @param dst destination buffer of the same runtime
     * @param dstOffset first destination byte, {@code >= 0}
     * @param bytes bytes to copy, {@code >= 0}, with {@code dstOffset + bytes <= dst.byteSize()}
     * @throws IllegalArgumentException for a heap segment, a buffer of another runtime, or a range
     *     out of bounds
     * @throws IllegalStateException if the stream, buffer or segment is closed
     * @throws GpuException if the runtime refuses the copy
     */
    default void copyHostToDevice(MemorySegment src, DeviceBuffer dst, long dstOffset, long bytes) {
        copyHostToDevice(src, 0, dst, dstOffset, bytes);
    }

    /**
     * Queues a copy of {@code bytes} from {@code src} at {@code srcOffset} into {@code dst} at
     * {@code dstOffset} (the host offset, as in
     * {@link #copyHostToDevice(MemorySegment, long, DeviceBuffer, long, long)}).
     *
     * @param src source buffer of the same runtime
     * @param srcOffset first source byte, {@code >= 0}, with
     *     {@code srcOffset + bytes <= src.byteSize()}
     * @param dst native host segment, writable
     * @param dstOffset first destination byte, {@code >= 0}, with {@code dstOffset + bytes <= dst.byteSize()}
     * @param bytes bytes to copy, {@code >= 0}
     * @throws IllegalArgumentException for a heap or read-only segment, a buffer of another
     *     runtime, or a range out of bounds
     * @throws IllegalStateException if the stream, buffer or segment is closed
     * @throws GpuException if the runtime refuses the copy
     */
    void copyDeviceToHost(DeviceBuffer src, long srcOffset, MemorySegment dst, long dstOffset, long bytes);

    /**
     * Queues a copy of {@code bytes} from {@code src} at {@code srcOffset} into the start of
     * {@code dst}: {@link #copyDeviceToHost(DeviceBuffer, long, MemorySegment, long, long)} with a
     * destination offset of 0.
     *
     * @param src source buffer of the same runtime
     * @param srcOffset first source byte, {@code >= 0}, with
     *     {@code srcOffset + bytes <= src.byteSize()}
     * @param dst native host segment, at least {@code bytes} long, writable
     * @param bytes bytes to copy, {@code >= 0}
     * @throws IllegalArgumentException for a heap or read-only segment, a buffer of another
     *     runtime, or a range out of bounds
     * @throws IllegalStateException if the stream, buffer or segment is closed
     * @throws GpuException if the runtime refuses the copy
     */
    default void copyDeviceToHost(DeviceBuffer src, long srcOffset, MemorySegment dst, long bytes) {
        copyDeviceToHost(src, srcOffset, dst, 0, bytes);
    }

    /**
     * Queues a copy between two device buffers of this runtime (they may be the same buffer when
     * the ranges do not overlap).
     *
     * @param src source buffer
     * @param srcOffset first source byte, with {@code srcOffset + bytes <= src.byteSize()}
     * @param dst destination buffer
     * @param dstOffset first destination byte, with {@code dstOffset + bytes <= dst.byteSize()}
     * @param bytes bytes to copy, {@code >= 0}
     * @throws IllegalArgumentException for a buffer of another runtime, a range out of bounds or
     *     overlapping ranges in one buffer
     * @throws IllegalStateException if the stream or a buffer is closed
     * @throws GpuException if the runtime refuses the copy
     */
    void copyDeviceToDevice(DeviceBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes);

    /**
     * Records an event that completes when all work queued on this stream before it completes.
     *
     * @return a new event owned by the runtime; close it when done
     * @throws IllegalStateException if the stream is closed
     * @throws GpuException if the runtime cannot create or record the event
     */
    GpuEvent record();

    /**
     * Records an event for waiting on the work queued so far, unless all of it has completed
     * without failing, when there is nothing to wait for and no event is made (the emulated
     * device's copies run inline on an idle stream and are done when their calls return). The
     * event is for waiting only and may be untimed ({@code cudaEventDisableTiming}):
     * {@link GpuEvent#elapsedMillisSince} may throw {@link IllegalArgumentException} for it. A
     * failure of queued work is reported by the event's waits, as for {@link #record()}. The
     * default records a timed event every time.
     *
     * @return the new event, owned by the runtime (close it when done), or empty when the work
     *     queued so far has completed
     * @throws IllegalStateException if the stream is closed
     * @throws GpuException if the runtime cannot create or record the event
     */
    default Optional<GpuEvent> recordIfPending() {
        return Optional.of(record());
    }

    /**
     * Blocks until all work queued so far has completed.
     *
     * @throws GpuException if a queued copy failed
     * @throws IllegalStateException if the stream is closed
     */
    void synchronize();

    /**
     * Waits for queued work, then destroys the stream; a second call is a no-op.
     *
     * @throws GpuException if the runtime fails to destroy it
     */
    @Override
    void close();
}
