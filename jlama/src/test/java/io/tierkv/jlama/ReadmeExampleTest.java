package io.tierkv.jlama;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.model.ModelSupport;
import com.github.tjake.jlama.safetensors.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.testing.SharedData;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.disk.DiskOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's Jlama snippet is this test's {@link #example} body, compiled and run. */
class ReadmeExampleTest {

    @TempDir
    Path kvDir;

    private final List<Generation> generations = new ArrayList<>();

    private void example(Path modelDir, int[] promptIds) {
        // snippet-start
        AbstractModel model = ModelSupport.loadModel(modelDir.toFile(), DType.F32, DType.F32);  // Jlama's DType
        KvLayout layout = TierKvJlama.layoutFor(model, 16);   // the model's layers, KV heads, head size; F32; B=16
        long modelKey = ModelFingerprint.of(modelDir);        // another model of this shape shares no block
        try (var gpu = new EmulatedDevice();
             var kv = KvBlockManager.builder(layout)
                     .device(gpu, 64L << 20)
                     .host(64L << 20)
                     .disk(DiskOptions.at(kvDir).withBudgetBytes(256L << 20).withPersistent(true))
                     .build();
             var jlama = TierKvJlama.install(model, kv)) {    // the model's KvBufferCache is now TierKV's
            for (int turn = 0; turn < 2; turn++) {
                try (var session = jlama.openSession(SequenceOptions.salt("tenant-a").withExtraKeys(modelKey))) {
                    Generation g = session.generate(promptIds, 32);  // cached full blocks are not computed
                    System.out.println(g.cachedTokens() + " cached " + g.hits() + ": " + Arrays.toString(g.tokens()));
                    generations.add(g);
                }
            }
        } finally {
            model.close();
        }
        // snippet-end
    }

    @Test
    void theReadmeSnippetRunsAndItsSecondTurnIsServedFromTheCache() throws IOException {
        Path modelDir = SharedData.require("models/jlama-random-d256");
        RefJson ref = RefJson.read(modelDir);
        int[] prompt = java.util.stream.IntStream.concat(java.util.stream.IntStream.of(ref.prompt()),
                java.util.stream.IntStream.of(ref.greedy())).toArray();
        example(modelDir, prompt);
        assertEquals(0, generations.get(0).cachedTokens());
        assertEquals(32, generations.get(1).cachedTokens());
        assertArrayEquals(generations.get(0).tokens(), generations.get(1).tokens());

        Path file = findReadme();
        String source = Files.readString(Path.of("src/test/java/io/tierkv/jlama/ReadmeExampleTest.java"));
        String body = between(source, "// snippet-start\n", "        // snippet-end").lines()
                .map(l -> l.startsWith("        ") ? l.substring(8) : l.strip())
                .collect(java.util.stream.Collectors.joining("\n", "", "\n"));
        String text = Files.readString(file);
        assertTrue(text.contains(body), "README.md's Jlama snippet differs from ReadmeExampleTest.example:\n"
                + body);
    }

    private static Path findReadme() {
        for (Path p : new Path[] {Path.of("../README.md"), Path.of("README.md")}) {
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        throw new AssertionError("README.md not found from " + Path.of("").toAbsolutePath());
    }

    private static String between(String s, String from, String to) {
        int a = s.indexOf(from) + from.length();
        int b = s.indexOf(to, a);
        return s.substring(a, b);
    }
}
