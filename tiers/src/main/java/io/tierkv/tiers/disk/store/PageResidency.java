package io.tierkv.tiers.disk.store;

import io.tierkv.natives.libc.Libc;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Whether every page of a record is in the page cache ({@code mincore}), asked before each load
 * (a cold record gets {@code MADV_WILLNEED}) and each spill (a cold destination gets positional
 * writes). One scratch buffer serves every check, so the question costs the system call and no
 * allocation: an arena per call made the check about a sixth of a warm 64 KiB load.
 *
 * <p>Not thread-safe: used under the disk tier's lock.
 */
final class PageResidency {

    private static final long PAGE_BYTES = Libc.pageSizeBytes();

    private final MemorySegment scratch;

    /**
     * @param arena          owns the scratch buffer (lives as long as the tier)
     * @param maxRecordBytes the largest range checked, in bytes
     */
    PageResidency(Arena arena, long maxRecordBytes) {
        this.scratch = arena.allocate(Libc.residentScratchBytes(maxRecordBytes + PAGE_BYTES), 8);
    }

    /**
     * Whether every page that holds {@code [off, off + len)} of a mapping (page-aligned at offset
     * 0) is in the page cache; false when {@code mincore} fails.
     *
     * @param map the segment's mapping
     * @param off first byte
     * @param len bytes, at most the {@code maxRecordBytes} given at creation
     * @return whether all its pages are resident
     */
    boolean allResident(MemorySegment map, long off, long len) {
        long pages = (off + len + PAGE_BYTES - 1) / PAGE_BYTES - off / PAGE_BYTES;
        return Libc.residentPages(map.asSlice(off, len), scratch) == pages;
    }
}
