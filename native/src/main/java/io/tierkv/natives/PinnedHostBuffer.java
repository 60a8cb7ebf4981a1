package io.tierkv.natives;

import java.lang.foreign.MemorySegment;

/**
 * Page-aligned host memory, page-locked where possible so device copies run at full speed and the
 * pages are never swapped out.
 *
 * <p>Pinning can fall short: without a GPU runtime, {@code mlock} is refused over
 * {@code RLIMIT_MEMLOCK}; the memory is then usable but unlocked, {@link #pinnedBytes()} is 0 and
 * the reason was logged. The tiers report requested against pinned bytes.
 *
 * <p>Lifetime: freed by {@link #close()} exactly once (a second close is a no-op) or by its owner's
 * close; afterwards the segment is inaccessible (access throws {@link IllegalStateException}).
 * Thread-safety: the segment is shared (any thread may access it); closing is thread-safe.
 */
public interface PinnedHostBuffer extends AutoCloseable {

    /**
     * The memory, exactly {@link #requestedBytes()} long, aligned to a page, zero when allocated.
     * A GPU driver's pinned allocation is committed (every page resident) by the driver; without a
     * GPU runtime ({@link HostMemory}) it is reserved and each page committed, and locked, on its
     * first touch.
     *
     * @return a shared native segment, valid until close
     */
    MemorySegment segment();

    /**
     * The size that was asked for.
     *
     * @return bytes, {@code > 0}
     */
    long requestedBytes();

    /**
     * Bytes page-locked: the requested size rounded up to whole pages when pinned (without a GPU
     * runtime: locked as each page is first touched), 0 when pinning was refused.
     *
     * @return pinned bytes, 0 or {@code >= requestedBytes()}
     */
    long pinnedBytes();

    /**
     * Whether this buffer has been closed.
     *
     * @return true after close
     */
    boolean isClosed();

    /**
     * Unpins and frees the memory; a second call is a no-op.
     *
     * @throws GpuException if the runtime fails to free it
     */
    @Override
    void close();
}
