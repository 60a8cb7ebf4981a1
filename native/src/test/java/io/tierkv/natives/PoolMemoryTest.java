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

/** {@link PoolMemory}: zero-filled pools, huge-page backed where the kernel allows it. */
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
                assertEquals(0, pool.get(ValueLayout.JAVA_BYTE, i), "zero-filled at " + i);
            }
            assumeTrue(Files.isReadable(THP) && !Files.readString(THP).contains("[never]"),
                    "transparent huge pages are off on this kernel (" + THP + ")");
            int rc = Libc.adviseHugePages(pool); // already collapsed: 0 again; else why the kernel refused
            assumeTrue(rc == 0, "the kernel refused MADV_HUGEPAGE/MADV_COLLAPSE: " + Libc.errnoName(rc)
                    + " (no free huge pages, or a kernel older than 6.1)");
            long hugeKb = anonHugeKbCovering(pool.address(), pool.address() + bytes);
            assertTrue(hugeKb >= 2048, "AnonHugePages over the pool: " + hugeKb + " kB (expected >= one 2 MiB page)");
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
