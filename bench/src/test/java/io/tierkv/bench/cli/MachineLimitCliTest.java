package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.testing.ChildJava;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Sizes beyond this machine (issue 16, item 1), run as the user runs them: {@code tierkv} in its
 * own JVM, which must exit with the bad-usage status 2 (1 is for failed byte checks) and print one
 * line naming the option as typed, its value and the bound, with no stack trace. The child runs
 * with its address space limited ({@code prlimit --as}), so that a check that stopped working ends
 * in an OutOfMemoryError there rather than in this machine's OOM killer.
 */
class MachineLimitCliTest {

    /** What a child printed (stdout and stderr together) and its status. */
    private record Result(int status, String output) {
    }

    @Test
    void deviceBytesBeyondTheMachineExitTwoWithOneLineNamingTheOption() throws Exception {
        Result r = tierkv("replay", "--device-bytes", "10t", "--no-progress");
        assertOneLine(r, "tierkv replay: --device-bytes 10t (10.0 TiB) does not fit host memory: needs ");
        assertTrue(r.output().contains("emulated device 10.0 TiB + pinned host"), r.output());
    }

    @Test
    void hostBytesBeyondTheMachineExitTwoWithOneLineNamingTheOption() throws Exception {
        Result r = tierkv("replay", "--host-bytes", "10t", "--no-progress");
        assertOneLine(r, "tierkv replay: --host-bytes 10t (10.0 TiB) does not fit host memory: needs ");
        assertTrue(r.output().contains("pinned host 10.0 TiB"), r.output());
    }

    @Test
    void hostTokensBeyondTheMachineExitTwoWithOneLineNamingTheOption() throws Exception {
        Result r = tierkv("replay", "--host-tokens", "1e15", "--no-progress");
        assertOneLine(r, "tierkv replay: --host-tokens 1e15 (28.4 PiB) does not fit host memory: needs ");
    }

    @Test
    void aSingleTierSlabBeyondTheMachineIsRefusedToo() throws Exception {
        Result r = tierkv("replay", "--single-tier", "--payload", "none", "--device-bytes", "10t", "--no-progress");
        assertOneLine(r, "tierkv replay: --device-bytes 10t (10.0 TiB) does not fit host memory: needs ");
        assertTrue(r.output().contains("device slab 1024 GiB"), r.output());
    }

    private static void assertOneLine(Result r, String start) {
        assertEquals(2, r.status(), r.output());
        String out = r.output().strip();
        assertFalse(out.contains("\n"), "one line:\n" + out);
        assertTrue(out.startsWith(start), out);
        assertTrue(out.contains("; available ") && out.contains(" of heap the JVM may still commit (-Xmx) - "), out);
        assertFalse(out.contains("Exception") || out.contains("Error") || out.contains("\tat "), out);
    }

    /** Runs the command line in a child JVM with the test JVM's access flags and paths ({@link ChildJava}). */
    private static Result tierkv(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        if (Files.isExecutable(Path.of("/usr/bin/prlimit"))) {
            cmd.addAll(List.of("/usr/bin/prlimit", "--as=" + (6L << 30)));
        }
        cmd.addAll(ChildJava.command(List.of("-Xmx512m"), TierKvCli.class, args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("MALLOC_ARENA_MAX", "2");
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("tierkv timed out: " + cmd);
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }
}
