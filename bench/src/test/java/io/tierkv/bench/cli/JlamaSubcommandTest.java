package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code tierkv jlama} is registered (module jlama on the class path) and refuses bad usage with 2. */
class JlamaSubcommandTest {

    private static int run(StringWriter out, StringWriter err, String... args) {
        CommandLine cl = TierKvCli.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
    }

    @Test
    void helpListsJlamaAndBadUsageExitsTwo() {
        StringWriter out = new StringWriter();
        assertEquals(0, run(out, new StringWriter(), "--help"));
        assertTrue(out.toString().contains("jlama"), out.toString());
        StringWriter err = new StringWriter();
        assertEquals(2, run(new StringWriter(), err, "jlama", "--prompt", "x"));
        assertTrue(err.toString().contains("--model-dir"), err.toString());
        err = new StringWriter();
        assertEquals(2, run(new StringWriter(), err, "jlama", "--model-dir", "no-such-dir", "--prompt", "x"));
        assertTrue(err.toString().contains("no-such-dir"), err.toString());
    }

    /**
     * Every option is checked before the model loads: a bad {@code --disk-bytes}, a
     * {@code --disk-bytes} without {@code --disk-dir} (no effect), a bad {@code --prefill} or
     * {@code --block-tokens} are refused with one line naming them as typed and nothing on stdout,
     * though the model directory (a config.json and nothing else) could not even be loaded.
     *
     * @param dir a temporary directory
     * @throws Exception on failure
     */
    @Test
    void everyOptionIsCheckedBeforeTheModelLoads(@TempDir Path dir) throws Exception {
        Path model = Files.createDirectories(dir.resolve("model"));
        Files.writeString(model.resolve("config.json"), "{}");
        String m = model.toString();
        String disk = dir.resolve("disk").toString();
        String[][] cases = {
            {"--disk-bytes abc without --disk-dir (expected --disk-dir DIR", "--disk-bytes", "abc"},
            {"--disk-bytes 1g without --disk-dir (expected --disk-dir DIR", "--disk-bytes", "1g"},
            {"--disk-bytes abc (expected a positive size such as 64m or 1g)", "--disk-dir", disk, "--disk-bytes", "abc"},
            {"--prefill 'foo' (expected token or batched)", "--prefill", "foo"},
            {"--block-tokens 0 (expected >= 1)", "--block-tokens", "0"},
        };
        for (String[] c : cases) {
            List<String> args = new ArrayList<>(List.of("jlama", "--model-dir", m, "--prompt", "x"));
            args.addAll(List.of(c).subList(1, c.length));
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            assertEquals(2, run(out, err, args.toArray(String[]::new)), args + ": " + err);
            List<String> lines = err.toString().lines().toList();
            assertEquals(1, lines.size(), args + ": " + err);
            assertTrue(lines.get(0).startsWith("tierkv jlama: " + c[0]), args + ": " + err);
            assertEquals("", out.toString(), args.toString());
        }
        assertFalse(Files.exists(dir.resolve("disk")), "no disk directory created");
    }
}
