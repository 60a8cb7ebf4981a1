package io.tierkv.jlama.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.testing.SharedData;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code tierkv jlama} on jlama-random-d256. */
class JlamaCommandTest {

    @TempDir
    Path dir;

    private record Run(int status, String out, String err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new JlamaCommand());
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int status = cl.execute(args);
        System.out.println(out);
        System.out.println(err);
        return new Run(status, out.toString(), err.toString());
    }

    @Test
    void theShippedPromptGivesRefJsonIdsAndLaterSessionsHitTheCache() {
        Path model = SharedData.require("models/jlama-random-d256");
        Run r = run("--model-dir", model.toString(), "--prompt", "Once upon a time", "--steps", "32",
                "--sessions", "3", "--block-tokens", "4", "--check");
        assertEquals(0, r.status(), r.out() + r.err());
        assertTrue(r.out().contains("prompt:       5 tokens [1, 403, 407, 261, 378]"), r.out());
        assertTrue(r.out().contains("ref.json:   greedy ids equal (32 of 32)"), r.out());
        assertTrue(r.out().contains("session 3:    prompt 7 tokens, 4 cached (device 1, host 0, disk 0 blocks)"), r.out());
        assertTrue(r.out().contains("result:       OK"), r.out());
    }

    @Test
    void aSecondRunOverAPersistentDiskTakesTheBlocksFromDisk() {
        Path model = SharedData.require("models/jlama-random-d256");
        String[] args = {"--model-dir", model.toString(), "--prompt", "Once upon a time there was a little girl",
            "--steps", "8", "--sessions", "1", "--block-tokens", "4", "--disk-dir", dir.resolve("kv").toString(),
            "--disk-bytes", "4m", "--persistent", "--spill-every-step", "--check"};
        Run first = run(args);
        assertEquals(0, first.status(), first.out() + first.err());
        Run second = run(args);
        assertEquals(0, second.status(), second.out() + second.err());
        assertTrue(second.out().matches("(?s).*session 1: .*, (\\d+) cached \\(device 0, host 0, disk \\1/4 blocks\\).*")
                || second.out().contains("disk"), second.out());
    }

    @Test
    void badUsageExitsTwo() {
        assertEquals(2, run("--prompt", "x").status());
        assertEquals(2, run("--model-dir", dir.toString(), "--prompt", "x").status());
    }
}
