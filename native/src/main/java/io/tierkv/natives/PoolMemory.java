package io.tierkv.natives;

import io.tierkv.natives.libc.Libc;
import io.tierkv.natives.runtime.NativeAccess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Allocates the memory of a block pool (emulated device memory, host memory): reserved whole now
 * and committed lazily, page by page, on first touch; zero until written; for pools of at least
 * one huge page {@link Libc#HUGE_PAGE_BYTES}-aligned and backed by transparent huge pages where
 * the kernel agrees, so block copies do not miss the TLB once per 4 KiB page.
 *
 * <pre>
 * mmap(PRIVATE | ANONYMOUS), aligned   address space charged to the commit limit; no page yet
 * madvise(MADV_HUGEPAGE)               before any touch: a first write of each 2 MiB faults in a
 *                                      zeroed huge page, the only write the kernel makes to it
 * </pre>
 *
 * <p>Why lazily rather than committed at build (issue 19 part 3; figures in BENCHMARKS.md,
 * "Building a manager against one zero-filled allocation"): committing means writing every page,
 * and on these VMs the pages worth having, huge pages, come from memory the hypervisor took back
 * while it was free, slow on first touch: one write per page of both pools, into huge pages, took
 * 1.04-5.05x one zero-filled allocation of the same bytes on base pages (medians of 3 runs, 256
 * MiB to 4 GiB per tier, same JVM), so a build that committed its pools, even writing each page
 * once, would miss the target of 1.2x. Committing on base pages instead would meet it but lose the
 * huge pages that block copies are measured against (base pages cost a copy 20-45%, BENCHMARKS.md,
 * issue 18). Lazily, {@code build()} writes nothing (0.002-0.036x the allocation, RSS +0-4 MiB),
 * RSS grows with the blocks actually stored, a page is still written once (by the kernel, into its
 * huge page) and pages never used are never paid for. The cost moves to the first block copy into
 * each 2 MiB of a pool: one huge-page fault, 4-8 ms on cold memory of these VMs (the first touch
 * above, per 2 MiB), under a millisecond on memory freed recently. What is given up: a pool that
 * fitted at build ({@code MachineFit} still checks every budget against the machine before
 * anything is mapped) can meet an OOM kill later, if other processes took the memory meanwhile. A
 * GPU's pinned host memory and device memory are committed by its driver; that path is not this
 * class.
 *
 * <p>Without native access (no {@code mmap}) the pool is a plain {@link Arena#allocate}, which the
 * JDK zero-fills: committed at once, one write per page, on base pages.
 *
 * <p>Thread-safety: stateless.
 */
final class PoolMemory {

    private static final System.Logger LOG = System.getLogger(PoolMemory.class.getName());

    private PoolMemory() {
    }

    /**
     * Reserves a pool; its pages are committed on first touch.
     *
     * @param arena owns the memory: closing it unmaps the pool
     * @param bytes pool size in bytes, {@code > 0}
     * @param align minimum alignment in bytes (a power of two)
     * @return the segment, exactly {@code bytes} long, reading as zero
     * @throws OutOfMemoryError if the kernel refuses the address space (for instance over the
     *     commit limit under {@code vm.overcommit_memory=2})
     */
    @SuppressWarnings("restricted")
    static MemorySegment allocate(Arena arena, long bytes, long align) {
        if (!NativeAccess.isEnabled()) {
            return arena.allocate(bytes, align);
        }
        boolean huge = bytes >= Libc.HUGE_PAGE_BYTES;
        long address = Libc.mapAnonymous(bytes, huge ? Math.max(align, Libc.HUGE_PAGE_BYTES) : align);
        if (address < 0) {
            throw new OutOfMemoryError("mmap of a pool of " + bytes + " bytes failed: "
                    + Libc.errnoName((int) -address));
        }
        MemorySegment pool = MemorySegment.ofAddress(address)
                .reinterpret(bytes, arena, unmapped -> Libc.unmap(address, bytes));
        if (huge) {
            int rc = Libc.madvise(pool, Libc.MADV_HUGEPAGE);
            if (rc != 0) {
                LOG.log(System.Logger.Level.DEBUG, "pool of " + bytes + " bytes keeps base pages: madvise answered "
                        + Libc.errnoName(rc));
            }
        }
        return pool;
    }
}
