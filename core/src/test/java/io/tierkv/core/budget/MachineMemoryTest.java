package io.tierkv.core.budget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.error.MachineLimitException;
import io.tierkv.core.error.TierKvException;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What the machine's memory can give, as the size checks read it (issue 16, item 1). */
class MachineMemoryTest {

    private static final long GIB = 1L << 30;
    private static final long MIB = 1L << 20;

    private static final List<String> MEMINFO = List.of(
            "MemTotal:       24683652 kB",
            "MemFree:        23780656 kB",
            "MemAvailable:   24313116 kB",
            "Buffers:          123456 kB");

    @Test
    void memAvailableAndMemTotalAreReadInBytes() {
        MachineMemory m = MachineMemory.parse(MEMINFO, -1, -1, GIB, 2 * GIB).orElseThrow();
        assertEquals(24313116L * 1024, m.availableBytes());
        assertEquals(24683652L * 1024, m.totalBytes());
        assertEquals("MemAvailable 23.2 GiB", m.source());
        assertEquals(24683652L * 1024 / 32, m.reserveBytes(), "1/32 of MemTotal");
        assertEquals(m.availableBytes() - GIB - m.reserveBytes(), m.poolBytes());
    }

    @Test
    void aContainerLimitBelowMemTotalLowersWhatIsAvailable() {
        MachineMemory m = MachineMemory.parse(MEMINFO, 4 * GIB, 3 * GIB, 0, 0).orElseThrow();
        assertEquals(3 * GIB, m.availableBytes());
        assertEquals("the container's memory limit 4.00 GiB minus its usage", m.source());
        MachineMemory unlimited = MachineMemory.parse(MEMINFO, 24683652L * 1024, 23780656L * 1024, 0, 0).orElseThrow();
        assertEquals(24313116L * 1024, unlimited.availableBytes(), "no limit: the JVM's total is MemTotal");
    }

    @Test
    void withoutMemAvailableNothingIsChecked() {
        assertEquals(Optional.empty(), MachineMemory.parse(List.of("MemTotal: 1024 kB", "MemFree: 512 kB"), -1, -1, 0,
                0));
        assertEquals(Optional.empty(), MachineMemory.parse(List.of(), -1, -1, 0, 0));
        assertEquals(Optional.empty(), MachineMemory.parse(List.of("MemTotal: x kB", "MemAvailable: 1 kB"), -1, -1, 0,
                0));
    }

    @Test
    void theReserveIsBetween256MiBAnd2GiB() {
        assertEquals(256 * MIB, new MachineMemory(GIB, 4 * GIB, "t", 0, 0).reserveBytes());
        assertEquals(512 * MIB, new MachineMemory(GIB, 16 * GIB, "t", 0, 0).reserveBytes());
        assertEquals(2 * GIB, new MachineMemory(GIB, 1024 * GIB, "t", 0, 0).reserveBytes());
        assertEquals(0, new MachineMemory(GIB, 4 * GIB, "t", GIB, GIB).poolBytes(), "never negative");
    }

    @Test
    void hostMemoryBeyondThePoolIsRefusedWithOptionValueAndBound() {
        MachineMemory m = new MachineMemory(4 * GIB, 8 * GIB, "MemAvailable 4.00 GiB", GIB, 2 * GIB);
        m.checkHost("host.budgetBytes", 2 * GIB, 2 * GIB + MIB, "x");
        MachineLimitException e = assertThrows(MachineLimitException.class,
                () -> m.checkHost("host.budgetBytes", 3 * GIB, 3 * GIB, "pinned host 3.00 GiB"));
        assertEquals("host.budgetBytes: 3221225472 B (3.00 GiB) does not fit host memory: needs pinned host 3.00 GiB;"
                + " available 2.75 GiB = MemAvailable 4.00 GiB - 1.00 GiB of heap the JVM may still commit (-Xmx) - 256 MiB"
                + " reserve", e.getMessage());
        assertEquals(2 * GIB + 768 * MIB, e.availableBytes());
        assertEquals(3 * GIB, e.requiredBytes());
        assertTrue(e instanceof TierKvException, "a failure the caller can handle");
    }

    @Test
    void invalidFiguresAreRejected() {
        assertEquals("availableBytes: 2 (expected 0 <= availableBytes <= totalBytes 1)",
                assertThrows(IllegalArgumentException.class, () -> new MachineMemory(2, 1, "t", 0, 0)).getMessage());
        assertEquals("heapMaxBytes: 0 (expected >= heapUncommittedBytes 1)",
                assertThrows(IllegalArgumentException.class, () -> new MachineMemory(1, 1, "t", 1, 0)).getMessage());
    }

    @Test
    void sizesAreFormattedWithThreeSignificantDigits() {
        assertEquals("512 B", MachineMemory.format(512));
        assertEquals("2.00 KiB", MachineMemory.format(2048));
        assertEquals("64.0 MiB", MachineMemory.format(64 * MIB));
        assertEquals("192 MiB", MachineMemory.format(192 * MIB));
        assertEquals("10.0 TiB", MachineMemory.format(10L << 40));
    }

    @Test
    void thisMachineIsRead() {
        Optional<MachineMemory> now = MachineMemory.now();
        if (System.getProperty("os.name").startsWith("Linux")) {
            MachineMemory m = now.orElseThrow();
            assertTrue(m.availableBytes() > 0 && m.availableBytes() <= m.totalBytes(), m.toString());
            assertEquals(Runtime.getRuntime().maxMemory(), m.heapMaxBytes(), m.toString());
        }
    }
}
