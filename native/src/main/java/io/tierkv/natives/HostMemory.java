package io.tierkv.natives;

import io.tierkv.natives.libc.Libc;
import io.tierkv.natives.runtime.CopyChecks;
import io.tierkv.natives.runtime.NativeAccess;
import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Pinned host memory without a GPU runtime: page-aligned off-heap memory, zero, reserved at
 * allocation and committed page by page on first touch, backed by transparent huge pages where the
 * buffer spans one and the kernel agrees ({@link PoolMemory}: why lazily), and locked into RAM as
 * its pages are touched ({@code mlock2(MLOCK_ONFAULT)}, which commits nothing) where the process
 * may lock that much.
 *
 * <p>When locking is refused (over {@code RLIMIT_MEMLOCK} without {@code CAP_IPC_LOCK}, or native
 * access not enabled) the memory is still returned, unlocked: {@link PinnedHostBuffer#pinnedBytes()}
 * is 0 and the reason is logged (System.Logger {@code io.tierkv.natives.HostMemory}: WARNING for
 * the first refusal, DEBUG after), naming the limit and how to raise it. {@link #pinnedBytesNow()}
 * and {@link #requestedBytesNow()} sum the live buffers for stats.
 *
 * <p>Thread-safety: thread-safe; each buffer has its own shared arena.
 */
public final class HostMemory {

    private static final System.Logger LOG = System.getLogger(HostMemory.class.getName());
    private static final AtomicBoolean WARNED = new AtomicBoolean();
    private static final AtomicLong REQUESTED = new AtomicLong();
    private static final AtomicLong PINNED = new AtomicLong();

    private HostMemory() {}

    /**
     * Allocates {@code bytes} of page-aligned memory and tries to lock it.
     *
     * @param bytes size in bytes, {@code > 0}
     * @return the buffer; its segment is exactly {@code bytes} long; pinned bytes are the size
     *     rounded up to whole pages, or 0 if locking was refused
     * @throws IllegalArgumentException if {@code bytes <= 0}
     * @throws OutOfMemoryError if the memory cannot be allocated at all
     */
    public static PinnedHostBuffer allocatePinned(long bytes) {
        return allocatePinned(bytes, () -> {});
    }

    /**
     * Bytes requested by all open buffers from this class.
     *
     * @return bytes
     */
    public static long requestedBytesNow() {
        return REQUESTED.get();
    }

    /**
     * Bytes actually locked by all open buffers from this class.
     *
     * @return bytes
     */
    public static long pinnedBytesNow() {
        return PINNED.get();
    }

    /**
     * {@link #allocatePinned(long)} with a callback that runs once, after the buffer is freed (the
     * emulated device uses it to forget the buffer).
     *
     * @param bytes size in bytes, {@code > 0}
     * @param onClose runs after the memory is freed
     * @return the buffer
     */
    static PinnedHostBuffer allocatePinned(long bytes, Runnable onClose) {
        CopyChecks.checkAllocation(bytes);
        boolean nativeAccess = NativeAccess.isEnabled();
        long page = nativeAccess ? Libc.pageSizeBytes() : 4096;
        long rounded = (bytes + page - 1) & -page;
        Arena arena = Arena.ofShared();
        MemorySegment all;
        try {
            all = PoolMemory.allocate(arena, rounded, page); // reserved; committed on first touch
        } catch (RuntimeException | OutOfMemoryError e) {
            arena.close();
            throw e;
        }
        long pinned = 0;
        String refused;
        if (!nativeAccess) {
            refused = NativeAccess.disabledReason();
        } else {
            int rc = Libc.mlockOnFault(all); // plain mlock would commit every page now
            if (rc == 0) {
                pinned = rounded;
                refused = null;
            } else {
                long limit = Libc.memlockLimitBytes();
                refused = "mlock2(" + rounded + " bytes, MLOCK_ONFAULT) failed: " + Libc.errnoName(rc)
                        + "; RLIMIT_MEMLOCK soft limit "
                        + (limit == Long.MAX_VALUE ? "unlimited" : limit + " bytes")
                        + ": raise it (ulimit -l, LimitMEMLOCK= in a systemd unit, memlock in"
                        + " /etc/security/limits.conf) or grant CAP_IPC_LOCK";
            }
        }
        if (refused != null) {
            Level level = WARNED.compareAndSet(false, true) ? Level.WARNING : Level.DEBUG;
            LOG.log(level, "host memory of " + bytes + " bytes is not pinned (pages may be swapped out, device"
                    + " copies run slower): " + refused);
        }
        REQUESTED.addAndGet(bytes);
        PINNED.addAndGet(pinned);
        return new Locked(arena, all, bytes, pinned, onClose);
    }

    private static final class Locked implements PinnedHostBuffer {
        private final Arena arena;
        private final MemorySegment all;
        private final MemorySegment segment;
        private final long pinnedBytes;
        private final Runnable onClose;
        private final AtomicBoolean closed = new AtomicBoolean();

        Locked(Arena arena, MemorySegment all, long requestedBytes, long pinnedBytes, Runnable onClose) {
            this.arena = arena;
            this.all = all;
            this.segment = all.asSlice(0, requestedBytes);
            this.pinnedBytes = pinnedBytes;
            this.onClose = onClose;
        }

        @Override
        public MemorySegment segment() {
            return segment;
        }

        @Override
        public long requestedBytes() {
            return segment.byteSize();
        }

        @Override
        public long pinnedBytes() {
            return pinnedBytes;
        }

        @Override
        public boolean isClosed() {
            return closed.get();
        }

        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            if (pinnedBytes > 0) {
                Libc.munlock(all); // freeing unlocks anyway; munlock first keeps the accounting exact
            }
            try {
                arena.close();
            } catch (IllegalStateException inUse) {
                closed.set(false);
                throw inUse;
            }
            REQUESTED.addAndGet(-segment.byteSize());
            PINNED.addAndGet(-pinnedBytes);
            onClose.run();
        }

        @Override
        public String toString() {
            return "host buffer 0x" + Long.toHexString(all.address()) + " (" + segment.byteSize() + " bytes, "
                    + pinnedBytes + " pinned)";
        }
    }
}
