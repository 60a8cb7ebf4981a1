package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code tierkv restart-bench}: a small run prints a row of figures for the count asked for and
 * leaves nothing behind; bad options are refused with one line naming them. (The figures
 * themselves are the benchmark's, not asserted here.)
 */
class RestartBenchCommandTest {

    /** Creates the test. */
    RestartBenchCommandTest() {
    }

    /** What one command printed and returned. */
    private record Result(int status, String out, String err) {
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = TierKvCli.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int status = cl.execute(args);
        return new Result(status, out.toString(), err.toString());
    }

    /**
     * Two counts, one run each, in a given directory: a row per count, whose tier is deleted after.
     *
     * @param dir a temporary directory
     * @throws Exception on failure
     */
    @Test
    void aSmallRunPrintsARowPerCountAndCleansUp(@TempDir Path dir) throws Exception {
        Result r = run("restart-bench", "--block-bytes", "4KiB", "--records", "300,1e3", "--runs", "1",
                "--warmup-records", "0", "--segment-bytes", "1MiB", "--dir", dir.toString());
        assertEquals(0, r.status(), r.err());
        assertTrue(r.out().lines().anyMatch(l -> l.trim().startsWith("300 ")), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.trim().startsWith("1000 ")), r.out());
        assertTrue(r.out().contains("ratio"), r.out());
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(0, left.count(), "the tiers are deleted after their rows");
        }
    }

    /**
     * The three timed steps rotate: every run times each step once, and over three runs each
     * step is first, second and third once (none always follows the tier's writing).
     */
    @Test
    void theStepsRotateSoThatEachIsFirstOnceInThreeRuns() {
        assertArrayEquals(new int[] {0, 1, 2}, RestartBenchCommand.stepOrder(0));
        assertArrayEquals(new int[] {1, 2, 0}, RestartBenchCommand.stepOrder(1));
        assertArrayEquals(new int[] {2, 0, 1}, RestartBenchCommand.stepOrder(2));
        assertArrayEquals(new int[] {0, 1, 2}, RestartBenchCommand.stepOrder(3));
    }

    /** Bad options: exit status 2 and a line naming the option, its value and the bound. */
    @Test
    void badOptionsAreRefusedByName() {
        Result r = run("restart-bench", "--block-bytes", "100");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--block-bytes 100 (100 B; expected a multiple of 64 from 64 to 4194304"), r.err());
        r = run("restart-bench", "--records", "0");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--records 0 (expected >= 1)"), r.err());
        r = run("restart-bench", "--runs", "0");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--runs 0 (expected 1 <= N <= 99)"), r.err());
    }

    /**
     * The user's own {@code DIR/warmup} and {@code DIR/tier-N}, which the command did not create,
     * are refused by name before anything is printed, and nothing in them is lost.
     *
     * @param dir a temporary directory
     * @throws Exception on failure
     */
    @Test
    void theUsersOwnFoldersNamedLikeTiersAreRefusedAndKept(@TempDir Path dir) throws Exception {
        Path thesis = Files.writeString(Files.createDirectories(dir.resolve("warmup")).resolve("thesis.tex"), "mine");
        Path notes = Files.writeString(Files.createDirectories(dir.resolve("tier-100")).resolve("notes"), "also mine");
        Result r = run("restart-bench", "--dir", dir.toString(), "--records", "100", "--warmup-records", "100",
                "--runs", "1", "--segment-bytes", "1m");
        assertEquals(2, r.status(), r.out() + r.err());
        assertTrue(r.err().startsWith("tierkv restart-bench: --dir " + dir + ": " + dir.resolve("warmup")
                + " exists and was not created by restart-bench"), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        assertEquals("", r.out());
        r = run("restart-bench", "--dir", dir.toString(), "--records", "100", "--warmup-records", "0", "--runs", "1",
                "--segment-bytes", "1m");
        assertEquals(2, r.status(), r.out() + r.err());
        assertTrue(r.err().contains("--dir " + dir + ": " + dir.resolve("tier-100") + " exists and was not created"),
                r.err());
        assertEquals("mine", Files.readString(thesis));
        assertEquals("also mine", Files.readString(notes));
    }

    /**
     * A tier left by an earlier run of the command (it holds the marker) is replaced, and the
     * user's other files beside the tiers are kept.
     *
     * @param dir a temporary directory
     * @throws Exception on failure
     */
    @Test
    void aTierLeftByAnEarlierRunIsReplacedAndOtherFilesAreKept(@TempDir Path dir) throws Exception {
        Path left = Files.createDirectories(dir.resolve("tier-100"));
        Files.writeString(left.resolve(RestartBenchCommand.MARKER), "");
        Path mine = Files.writeString(dir.resolve("mine.txt"), "mine");
        Result r = run("restart-bench", "--dir", dir.toString(), "--records", "100", "--warmup-records", "100",
                "--runs", "1", "--segment-bytes", "1m");
        assertEquals(0, r.status(), r.err());
        assertTrue(r.out().lines().anyMatch(l -> l.trim().startsWith("100 ")), r.out());
        assertFalse(Files.exists(left), "the command's own tier is deleted after its row");
        assertEquals("mine", Files.readString(mine));
    }

    /**
     * A {@code --dir} under a file, or counts the disk has no room for, are refused before
     * anything is printed or created.
     *
     * @param dir a temporary directory
     * @throws Exception on failure
     */
    @Test
    void aBadDirOrATooLargeCountIsRefusedBeforeAnythingIsPrintedOrCreated(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("afile"), "x");
        Result r = run("restart-bench", "--dir", file.resolve("sub").toString());
        assertEquals(2, r.status(), r.out() + r.err());
        assertTrue(r.err().contains("--dir " + file.resolve("sub") + ": " + file + " is not a directory"), r.err());
        assertEquals("", r.out());
        Path base = dir.resolve("base");
        r = run("restart-bench", "--dir", base.toString(), "--records", "1e12", "--warmup-records", "0");
        assertEquals(2, r.status(), r.out() + r.err());
        assertTrue(r.err().contains("--records 1e12: needs about "), r.err());
        assertEquals("", r.out());
        assertFalse(Files.exists(base), "nothing created");
    }
}
