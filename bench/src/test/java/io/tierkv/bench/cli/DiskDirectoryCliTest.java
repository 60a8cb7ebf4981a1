package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.store.DiskTier;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A disk directory the tier refuses (another manager holds it; a persistent tier's records under a
 * command whose tier is not persistent, which would delete them) is bad usage: one line that names
 * the option and the directory, status 2, no stack trace, and every file left as it was.
 */
class DiskDirectoryCliTest {

    /** Creates the test. */
    DiskDirectoryCliTest() {
    }

    @TempDir
    Path dir;

    private static List<String> listing(Path d) throws IOException {
        try (Stream<Path> s = Files.list(d)) {
            return s.map(p -> p.getFileName() + ":" + p.toFile().length()).sorted().toList();
        }
    }

    private static void assertRefused(CliProcess.Result r, String... parts) {
        assertEquals(2, r.status(), r.output());
        String line = r.output().lines().filter(l -> l.startsWith("tierkv ")).findFirst().orElse("");
        for (String part : parts) {
            assertTrue(line.contains(part), "expected '" + part + "' in:\n" + r.output());
        }
        assertFalse(r.output().contains("Exception") || r.output().contains("\tat "), r.output());
    }

    /**
     * A persistent tier's records are refused by a replay's tier, which is not persistent.
     *
     * @throws Exception on failure
     */
    @Test
    void aReplayRefusesAPersistentTiersRecordsAndKeepsThem() throws Exception {
        Path d = dir.resolve("kept");
        KvLayout layout = KvLayout.of(1, 1, 64, DType.F16, 16);
        try (Arena arena = Arena.ofConfined();
                DiskTier tier = DiskTier.open(DiskOptions.at(d).withPersistent(true).withSegmentBytes(1 << 20)
                        .withBudgetBytes(8 << 20).withLowSpaceWarnBytes(0), layout)) {
            assertTrue(tier.put(1, 2, arena.allocate(64), arena.allocate(layout.bytesPerBlock())));
        }
        List<String> before = listing(d);
        CliProcess.Result r = CliProcess.run("replay", "--requests", "3", "--disk-dir", d.toString());
        assertRefused(r, "tierkv replay: --disk-dir " + d + ": disk tier directory " + d,
                "a persistent disk tier's records");
        assertEquals(before, listing(d), "nothing deleted");
    }

    /**
     * A directory another manager holds is refused with the option named.
     *
     * @throws Exception on failure
     */
    @Test
    void aDirectoryHeldByAnotherManagerNamesTheOption() throws Exception {
        Path d = dir.resolve("held");
        KvLayout layout = KvLayout.of(1, 1, 64, DType.F16, 16);
        try (DiskTier holder = DiskTier.open(DiskOptions.at(d).withSegmentBytes(1 << 20).withBudgetBytes(8 << 20)
                .withLowSpaceWarnBytes(0), layout)) {
            CliProcess.Result r = CliProcess.run("replay", "--requests", "3", "--disk-dir", d.toString());
            assertRefused(r, "tierkv replay: --disk-dir " + d + ": disk tier directory " + d, "held by another manager");
            assertEquals(0, holder.blockCount());
        }
    }
}
