package io.tierkv.natives;

import io.tierkv.natives.libc.Libc;
import io.tierkv.natives.runtime.NativeAccess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Allocates the memory of a block pool (emulated device memory, host memory): zero-filled, so
 * every page is written once now rather than on the first block copy, and, for pools of at least
 * one huge page, {@link Libc#HUGE_PAGE_BYTES}-aligned and backed by transparent huge pages where
 * the kernel agrees ({@link Libc#adviseHugePages}), so block copies do not miss the TLB once per
 * 4 KiB page.
 *
 * <p>Thread-safety: stateless.
 */
final class PoolMemory {

    private static final System.Logger LOG = System.getLogger(PoolMemory.class.getName());

    private PoolMemory() {
    }

    /**
     * Allocates a pool.
     *
     * @param arena owns the memory
     * @param bytes pool size in bytes, {@code > 0}
     * @param align minimum alignment in bytes (a power of two)
     * @return the zero-filled segment, exactly {@code bytes} long
     * @throws OutOfMemoryError if the memory cannot be allocated
     */
    static MemorySegment allocate(Arena arena, long bytes, long align) {
        boolean huge = bytes >= Libc.HUGE_PAGE_BYTES && NativeAccess.isEnabled();
        MemorySegment pool = arena.allocate(bytes, huge ? Math.max(align, Libc.HUGE_PAGE_BYTES) : align);
        if (huge) {
            int rc = Libc.adviseHugePages(pool);
            if (rc != 0) {
                LOG.log(System.Logger.Level.DEBUG, "pool of " + bytes + " bytes keeps base pages: madvise answered "
                        + Libc.errnoName(rc));
            }
        }
        return pool;
    }
}
