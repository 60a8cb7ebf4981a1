package io.tierkv.natives;

import java.lang.foreign.MemorySegment;
import java.util.Optional;

/**
 * A range of device memory owned by one {@link GpuRuntime}. Copy to and from it through a
 * {@link GpuStream}; a GPU kernel can read it at {@link #address()}.
 *
 * <p>Lifetime: freed by {@link #close()} exactly once (a second close is a no-op), or by the
 * owning runtime's close. Freeing waits for copies still queued on the device (as
 * {@code hipFree} does). After close, {@link #address()}, {@link #hostView()} and copies that name
 * this buffer throw {@link IllegalStateException}.
 *
 * <p>Thread-safety: safe to share between threads; the bytes are the caller's to coordinate.
 */
public interface DeviceBuffer extends AutoCloseable {

    /**
     * The device address of the first byte.
     *
     * @return a device pointer (on the emulated device, the host address of its segment)
     * @throws IllegalStateException if the buffer is closed
     */
    long address();

    /**
     * The size in bytes, as allocated.
     *
     * @return bytes, {@code > 0}; still answers after close
     */
    long byteSize();

    /**
     * The buffer's bytes as a host segment, present only on the emulated device whose "device
     * memory" is host memory. The segment becomes inaccessible when the buffer is closed.
     *
     * @return the host view, or empty on a real GPU
     * @throws IllegalStateException if the buffer is closed
     */
    Optional<MemorySegment> hostView();

    /**
     * Whether this buffer has been closed (by itself or its runtime).
     *
     * @return true after close
     */
    boolean isClosed();

    /**
     * Frees the buffer; a second call is a no-op.
     *
     * @throws GpuException if the runtime fails to free it
     */
    @Override
    void close();
}
