package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tierkv.natives.libc.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link PoolMemory}: zero pools, committed on first touch, huge-page backed where the kernel allows it. */
class PoolMemoryTest {

    private static final Path THP = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");

    @Test
    void aPoolOfSeveralHugePagesIsAlignedZeroFilledAndBackedByHugePages() throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            long bytes = 4 * Libc.HUGE_PAGE_BYTES + 4096;
            MemorySegment pool = PoolMemory.allocate(arena, bytes, 4096);
            assertEquals(bytes, pool.byteSize());
            assertEquals(0, pool.address() % Libc.HUGE_PAGE_BYTES, "huge-page aligned");
            for (long i = 0; i < bytes; i += 4096) {
                assertEquals(0, pool.get(ValueLayout.JAVA_BYTE, i), "zero at " + i);
            }
            assumeTrue(Files.isReadable(THP) && !Files.readString(THP).contains("[never]"),
                    "transparent huge pages are off on this kernel (" + THP + ")");
            int rc = Libc.madvise(pool, Libc.MADV_HUGEPAGE); // given already: 0 again; else why the kernel refused
            assumeTrue(rc == 0, "the kernel refused MADV_HUGEPAGE: " + Libc.errnoName(rc));
            for (long i = 0; i < bytes; i += Libc.HUGE_PAGE_BYTES) {
                pool.set(ValueLayout.JAVA_BYTE, i, (byte) 1); // commits: a huge page per 2 MiB where the kernel has one
            }
            long hugeKb = anonHugeKbCovering(pool.address(), pool.address() + bytes);
            assertTrue(hugeKb >= 2048, "AnonHugePages over the pool: " + hugeKb + " kB (expected >= one 2 MiB page)");
        }
    }

    /**
     * Issue 19 part 3: a pool is reserved, not committed, when allocated (no page resident), and
     * its pages are committed on first touch, straight into huge pages: about one page fault per
     * 2 MiB. Before, the JDK zero-filled every page on base pages at allocation (16,384 faults
     * for this pool) and MADV_COLLAPSE then copied them into huge pages.
     */
    @Test
    void aPoolIsCommittedOnFirstTouchOneHugePageAtATime() throws IOException {
        long bytes = 64L << 20;
        long pages = bytes / Libc.pageSizeBytes();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pool = PoolMemory.allocate(arena, bytes, 4096);
            assertEquals(0, Libc.residentPages(pool), "no page resident after allocation: committed on first touch");
            long faultsBefore = minorFaults();
            for (long i = 0; i < bytes; i += 4096) {
                pool.set(ValueLayout.JAVA_BYTE, i, (byte) 1);
            }
            long faults = minorFaults() - faultsBefore;
            assertEquals(pages, Libc.residentPages(pool), "every written page resident");
            assumeTrue(Files.isReadable(THP) && !Files.readString(THP).contains("[never]"),
                    "transparent huge pages are off on this kernel (" + THP + ")");
            long hugeKb = anonHugeKbCovering(pool.address(), pool.address() + bytes);
            assumeTrue(hugeKb >= (bytes >> 10) / 2, "the kernel had no free huge pages: AnonHugePages over the pool "
                    + hugeKb + " kB of " + (bytes >> 10));
            // One fault per huge page where the kernel has one free at fault time; on a busy machine it
            // falls back to base pages for some (khugepaged collapses them later) and the JVM's other
            // threads fault too (2,283 of 16,384 seen at a load of 10), so the bound is half the base
            // pages: committed on touch mostly in huge pages, not zero-filled base page by base page.
            assertTrue(faults < pages / 2, "minor faults while first writing " + pages + " pages: " + faults
                    + " (expected < " + pages / 2 + ": mostly one per huge page, not one per base page)");
        }
    }

    @Test
    void aPoolSmallerThanAHugePageKeepsTheAskedAlignment() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pool = PoolMemory.allocate(arena, 64 << 10, 4096);
            assertEquals(64 << 10, pool.byteSize());
            assertEquals(0, pool.address() % 4096);
        }
    }

    /** {@return this process's minor page faults so far: field 10 of /proc/self/stat} */
    static long minorFaults() throws IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        return Long.parseLong(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[7]);
    }

    /** Sums AnonHugePages of the mappings in /proc/self/smaps that overlap [start, end). */
    private static long anonHugeKbCovering(long start, long end) throws IOException {
        List<String> lines = Files.readAllLines(Path.of("/proc/self/smaps"));
        long total = 0;
        boolean inside = false;
        for (String line : lines) {
            int dash = line.indexOf('-');
            int space = line.indexOf(' ');
            if (dash > 0 && space > dash && line.substring(0, dash).matches("[0-9a-f]+")) {
                long lo = Long.parseUnsignedLong(line.substring(0, dash), 16);
                long hi = Long.parseUnsignedLong(line.substring(dash + 1, space), 16);
                inside = lo < end && hi > start;
            } else if (inside && line.startsWith("AnonHugePages:")) {
                total += Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return total;
    }
}
