package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Interrupts and failed starts (issue 16, item 4), run as processes with their own
 * {@code java.io.tmpdir}: SIGINT ends the progress line, prints the partial summary and leaves no
 * temporary directory; a start that fails leaves none either.
 */
class InterruptCliTest {

    /** Creates the test. */
    InterruptCliTest() {
    }

    /**
     * SIGINT in the middle of a replay: the progress line ends, the partial summary is printed,
     * the temporary disk directory is deleted, the status is 130.
     *
     * @param tmp the child's temporary directory
     * @throws Exception on failure
     */
    @Test
    void sigintDuringAReplayPrintsThePartialSummaryAndDeletesItsTempDirectory(@TempDir Path tmp) throws Exception {
        String out = interrupt(tmp, "req/s", 300, "replay", "--requests", "200000", "--progress");
        int bar = out.lastIndexOf("req/s");
        int note = out.indexOf("interrupted after ");
        assertTrue(note > bar && out.substring(bar, note).contains("\n"), "the bar's line ends first:\n" + out);
        assertTrue(out.contains(" of 200000 requests: partial summary") && out.contains("hit rate:"), out);
        assertEquals(List.of(), leftIn(tmp), out);
    }

    /**
     * SIGINT in the middle of a soak: the partial summary with its verdict, no temporary directory.
     *
     * @param tmp the child's temporary directory
     * @throws Exception on failure
     */
    @Test
    void sigintDuringASoakPrintsThePartialSummaryAndDeletesItsTempDirectory(@TempDir Path tmp) throws Exception {
        // after the manager's first open: an interrupt inside it is not what this test is about
        String out = interrupt(tmp, "working set:", 2_000, "soak", "--duration", "60s", "--threads", "2");
        assertTrue(out.contains("interrupted after ") && out.contains("result: "), out);
        assertEquals(List.of(), leftIn(tmp), out);
    }

    /**
     * A start that fails after its temporary directory was made deletes it.
     *
     * @param tmp the child's temporary directory
     * @throws Exception on failure
     */
    @Test
    void aFailedStartLeavesNoTemporaryDirectory(@TempDir Path tmp) throws Exception {
        List<String> jvm = List.of("-Djava.io.tmpdir=" + tmp);
        CliProcess.Result soak = CliProcess.run(jvm, "soak", "--disk-bytes", "8k", "--duration", "1s");
        assertEquals(2, soak.status(), soak.output());
        assertTrue(soak.output().contains("tierkv soak: --disk-bytes 8k: budgetBytes: 8192 (expected >= "),
                soak.output());
        CliProcess.Result replay = CliProcess.run(jvm, "replay", "--disk-bytes", "8k", "--requests", "1",
                "--layout", "llama3-8b", "--no-progress");
        assertEquals(2, replay.status(), replay.output());
        assertTrue(replay.output().contains("--disk-bytes"), replay.output());
        assertEquals(List.of(), leftIn(tmp), soak.output() + replay.output());
    }

    /**
     * Starts a child, waits for {@code ready} in its output and {@code thenMillis} more, sends SIGINT,
     * returns all it printed.
     */
    private static String interrupt(Path tmp, String ready, long thenMillis, String... args) throws Exception {
        Process p = CliProcess.start(List.of("-Djava.io.tmpdir=" + tmp), Map.of(), args);
        StringBuffer out = new StringBuffer();
        Thread reader = Thread.ofPlatform().start(() -> drain(p.getInputStream(), out));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!out.toString().contains(ready) && p.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertTrue(p.isAlive() && out.toString().contains(ready), "not ready:\n" + out);
        Thread.sleep(thenMillis);
        Process kill = new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).inheritIO().start();
        assertEquals(0, kill.waitFor());
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("did not exit within 30 s of SIGINT:\n" + out);
        }
        reader.join(5_000);
        assertEquals(130, p.exitValue(), out.toString());
        assertFalse(out.toString().contains("Exception in") || out.toString().contains("\tat "), out.toString());
        return out.toString();
    }

    private static void drain(InputStream in, StringBuffer out) {
        byte[] buf = new byte[8192];
        try {
            for (int n; (n = in.read(buf)) > 0; ) {
                out.append(new String(buf, 0, n, StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            out.append("[read failed: ").append(e).append(']');
        }
    }

    /** The tierkv directories left in a temporary directory. */
    private static List<String> leftIn(Path tmp) throws IOException {
        try (Stream<Path> s = Files.list(tmp)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("tierkv-")).sorted().toList();
        }
    }
}
