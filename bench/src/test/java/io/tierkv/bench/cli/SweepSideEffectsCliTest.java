package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sweep's side effects (issue 16, item 7), run as processes: it writes only the files it is
 * given, and a tiered sweep that is flat at the ceiling says why.
 */
class SweepSideEffectsCliTest {

    /** Creates the test. */
    SweepSideEffectsCliTest() {
    }

    /**
     * Without --sweep-csv and --plot, a sweep writes nothing into the working directory.
     *
     * @param work the child's working directory
     * @param tmp  the child's temporary directory
     * @throws Exception on failure
     */
    @Test
    void aSweepWithoutOutputOptionsWritesNothingIntoTheWorkingDirectory(@TempDir Path work, @TempDir Path tmp)
            throws Exception {
        CliProcess.Result r = CliProcess.run(work, List.of("-Djava.io.tmpdir=" + tmp), "replay", "--requests", "60",
                "--single-tier", "--payload", "none", "--sweep", "4096,32768", "--no-progress");
        assertEquals(0, r.status(), r.output());
        assertTrue(r.output().contains("device       4096 tokens: hit rate"), r.output());
        assertFalse(r.output().contains("wrote"), r.output());
        try (Stream<Path> s = Files.list(work)) {
            assertEquals(List.of(), s.toList());
        }
    }

    /**
     * A tiered sweep whose points all reach the ceiling says that the lower tiers are the reason.
     *
     * @param tmp the child's temporary directory
     * @throws Exception on failure
     */
    @Test
    void aTieredSweepAtTheCeilingSaysSoAndNamesSingleTier(@TempDir Path tmp) throws Exception {
        CliProcess.Result r = CliProcess.run(List.of("-Djava.io.tmpdir=" + tmp), "replay", "--requests", "60",
                "--payload", "none", "--movers", "0", "--sweep", "4096,32768", "--no-progress");
        assertEquals(0, r.status(), r.output());
        assertTrue(r.output().contains("note: every point is at the ceiling") && r.output().contains("--single-tier"),
                r.output());
    }

    /**
     * --sweep-csv or --plot without --sweep is bad usage rather than silently ignored.
     *
     * @param dir a temporary directory
     * @throws Exception on failure
     */
    @Test
    void aPlotWithoutASweepIsBadUsage(@TempDir Path dir) throws Exception {
        Path png = dir.resolve("p.png");
        CliProcess.Result r = CliProcess.run("replay", "--plot", png.toString(), "--no-progress");
        assertEquals(2, r.status(), r.output());
        assertTrue(r.output().contains("tierkv replay: --plot " + png + " (expected with --sweep)"), r.output());
    }
}
