package io.tierkv.jlama.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.testing.SharedData;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
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
        assertTrue(first.out().contains("session 1:    prompt 12 tokens, 0 cached (device 0, host 0, disk 0 blocks)"),
                first.out());
        assertTrue(second.out().contains("session 1:    prompt 12 tokens, 8 cached (device 0, host 0, disk 2 blocks)"),
                second.out());
    }

    /**
     * A model of the same shape with other weights (here: the low byte of every float of its first
     * tensor bytes changed, in a copy of the directory) finds none of the first model's blocks in
     * the persistent disk tier: they are another model's KV. It found them, and decoded from them,
     * when the sessions' identity named the layout alone.
     *
     * @throws Exception on failure
     */
    @Test
    void aModelWithOtherWeightsOfTheSameShapeFindsNoneOfItsBlocks() throws Exception {
        Path model = SharedData.require("models/jlama-random-d256");
        Path other = Files.createDirectories(dir.resolve("other"));
        try (var files = Files.list(model)) {
            for (Path f : files.toList()) {
                Files.copy(f, other.resolve(f.getFileName()));
            }
        }
        Path weights = other.resolve("model.safetensors");
        byte[] b = Files.readAllBytes(weights);
        long header = java.nio.ByteBuffer.wrap(b, 0, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
        for (long i = 8 + header; i < b.length; i += 4) { // F32, little-endian: the lowest mantissa byte
            b[(int) i] ^= 0x5A;
        }
        Files.write(weights, b);
        String kv = dir.resolve("kv").toString();
        String[] common = {"--prompt", "Once upon a time there was a little girl", "--steps", "8", "--sessions", "1",
            "--block-tokens", "4", "--disk-dir", kv, "--disk-bytes", "4m", "--persistent", "--spill-every-step",
            "--check"};
        Run first = run(concat(new String[] {"--model-dir", model.toString()}, common));
        assertEquals(0, first.status(), first.out() + first.err());
        Run second = run(concat(new String[] {"--model-dir", other.toString()}, common));
        assertEquals(0, second.status(), second.out() + second.err());
        assertTrue(second.out().contains("session 1:    prompt 12 tokens, 0 cached (device 0, host 0, disk 0 blocks)"),
                second.out());
        Run third = run(concat(new String[] {"--model-dir", model.toString()}, common));
        assertTrue(third.out().contains("session 1:    prompt 12 tokens, 8 cached (device 0, host 0, disk 2 blocks)"),
                "the first model still finds its own: " + third.out());
    }

    private static String[] concat(String[] a, String[] b) {
        String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    @Test
    void badUsageExitsTwo() throws Exception {
        assertEquals(2, run("--prompt", "x").status());
        assertEquals(2, run("--model-dir", dir.toString(), "--prompt", "x").status());
        Path broken = Files.createDirectories(dir.resolve("broken"));
        Files.writeString(broken.resolve("config.json"), "{\"dim\": 64,"); // cut short
        Run r = run("--model-dir", broken.toString(), "--prompt", "x");
        assertEquals(2, r.status(), r.out() + r.err());
        assertTrue(r.err().startsWith("tierkv jlama: --model-dir " + broken + ": Jlama cannot load a model from it ("),
                r.err());
        assertEquals(1, r.err().lines().count(), r.err());
    }

    @Test
    void stepsPastTheContextLengthAreRefusedBeforeTheModelLoads() throws Exception {
        Path small = Files.createDirectories(dir.resolve("small"));
        Files.writeString(small.resolve("config.json"), "{\"max_position_embeddings\": 64}"); // no weights: never loaded
        Run r = run("--model-dir", small.toString(), "--prompt", "x", "--steps", "65");
        assertEquals(2, r.status(), r.out() + r.err());
        assertEquals("tierkv jlama: --steps 65 (expected <= 64, the model's context length, max_position_embeddings in "
                + small.resolve("config.json") + ", which holds the prompt and the steps)", r.err().strip());
    }
}
