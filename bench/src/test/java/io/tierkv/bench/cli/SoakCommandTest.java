package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code tierkv soak} in-process: a short run with restarts of the disk tier passes every check. */
class SoakCommandTest {

    /** Creates the test. */
    SoakCommandTest() {
    }

    /**
     * Five seconds, a restart every two: exit status 0, zero mismatches, zero leaked blocks, work done.
     *
     * @param dir a temporary directory
     */
    @Test
    void fiveSecondSoakPasses(@TempDir Path dir) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = TierKvCli.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int status = cl.execute("soak", "--duration", "5s", "--restart-every", "2s", "--disk-dir",
                dir.resolve("disk").toString());
        String text = out.toString();
        assertEquals(0, status, text + err);
        assertTrue(text.contains("\nmismatches: 0\n"), text);
        assertTrue(text.contains("\nleaked blocks: 0 "), text);
        assertTrue(text.contains("result: PASS"), text);
        Matcher ops = Pattern.compile("operations: (\\d+) .*restarts (\\d+)").matcher(text);
        assertTrue(ops.find(), text);
        assertTrue(Long.parseLong(ops.group(1)) > 0, text);
        assertTrue(Long.parseLong(ops.group(2)) >= 1, text);
        assertTrue(Files.isDirectory(dir.resolve("disk")), "the disk tier used --disk-dir");
    }

    /**
     * Five seconds with one disk-record verification in twenty finding its record damaged: every
     * injected corruption is detected, blocks are lost below as counted events, and the run passes.
     *
     * @param dir a temporary directory
     */
    @Test
    void aSoakWithInjectedCorruptionPassesAndCountsEveryInjection(@TempDir Path dir) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = TierKvCli.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int status = cl.execute("soak", "--duration", "5s", "--restart-every", "2s", "--corrupt-rate", "0.05",
                "--disk-dir", dir.resolve("disk").toString());
        String text = out.toString();
        assertEquals(0, status, text + err);
        Matcher c = Pattern.compile("corruption: (\\d+) records damaged by injection \\(rate 0.05\\), (\\d+) detected")
                .matcher(text);
        assertTrue(c.find(), text);
        assertTrue(Long.parseLong(c.group(1)) > 0, text);
        assertEquals(c.group(1), c.group(2), "every injected corruption detected: " + text);
        assertTrue(text.contains("\nmismatches: 0\n"), text);
        assertTrue(text.contains("\nleaked blocks: 0 "), text);
        assertTrue(text.contains("invariant checks: ") && text.contains(", violations 0 "), text);
        assertTrue(text.contains("result: PASS"), text);
    }

    /** Durations take ms, s, m and h; a bare number is seconds. */
    @Test
    void parsesDurations() {
        assertEquals(500_000_000L, SoakCommand.parseDuration("500ms", "d"));
        assertEquals(60_000_000_000L, SoakCommand.parseDuration("60s", "d"));
        assertEquals(600_000_000_000L, SoakCommand.parseDuration("10m", "d"));
        assertEquals(3_600_000_000_000L, SoakCommand.parseDuration("1h", "d"));
        assertEquals(2_000_000_000L, SoakCommand.parseDuration("2", "d"));
    }
}
