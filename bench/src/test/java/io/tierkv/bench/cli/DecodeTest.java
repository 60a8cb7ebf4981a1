package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierkv.bench.model.LlamaModel;
import io.tierkv.bench.model.Tokenizer;
import io.tierkv.core.testing.SharedData;
import io.tierkv.tiers.TierStats;
import io.tierkv.tiers.disk.Compression;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code tierkv decode}: stories260K with its K/V only in TierKV reproduces
 * {@code oracle_greedy.json} exactly, (a) with a device budget that holds everything, (b) with a
 * device of 4 blocks, a host of 4 blocks and an LZ4 disk tier, so blocks spill to disk and come
 * back for every attention pass, and (c) as 4 parallel sequences sharing a prompt (fork, and
 * prefix matching), each equal to its independent run over plain arrays.
 */
class DecodeTest {

    private static LlamaModel model;
    private static Tokenizer tokenizer;
    private static JsonNode oracle;
    private static Path dir;

    /** Creates the test. */
    DecodeTest() {
    }

    /**
     * Loads the model once.
     *
     * @throws IOException if a file cannot be read
     */
    @BeforeAll
    static void load() throws IOException {
        dir = SharedData.require("models/stories260K");
        model = LlamaModel.load(dir.resolve("stories260K.bin"));
        tokenizer = Tokenizer.load(dir.resolve("tok512.bin"), model.config().vocabSize());
        oracle = new ObjectMapper().readTree(dir.resolve("oracle_greedy.json").toFile());
    }

    private static int[] ints(JsonNode a) {
        int[] out = new int[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.get(i).asInt();
        }
        return out;
    }

    private static int[] bos() {
        return new int[] {oracle.at("/greedy_from_bos/start_token").asInt()};
    }

    private static int[] promptIds() {
        int[] ids = tokenizer.encode(oracle.at("/prompt_case/prompt").asText(), true, false);
        assertArrayEquals(ints(oracle.at("/prompt_case/prompt_ids_with_bos")), ids);
        return ids;
    }

    private static TierDecoding.Setup setup(int device, int host, Path disk, TierKvStore.Read read) {
        return new TierDecoding.Setup(16, device, host, disk, disk == null ? 0 : 16L << 20, Compression.LZ4, 1, 1,
                read, 1);
    }

    private static TierDecoding.Result decode(TierDecoding.Setup s, int[] prompt, int steps) {
        return TierDecoding.tierkv(model, s, prompt, steps, 1, TierDecoding.Share.FORK);
    }

    /**
     * Tiers too small for what the options run at once (four prompt-sharing sequences on a device
     * of four blocks, two of them kept for recent blocks) end with one line naming the capacity
     * and status 2, where they ended with a 22-line stack trace and status 1 (which means "tokens
     * differ").
     *
     * @throws Exception on failure
     */
    @Test
    void tiersTooSmallForTheRunAreOneLineAndStatusTwo() throws Exception {
        CliProcess.Result r = CliProcess.run("decode", "--model-dir", dir.toString(), "--check", "--parallel", "4",
                "--share", "prefix", "--block-tokens", "3", "--device-blocks", "4", "--recent-blocks", "2",
                "--host-blocks", "2", "--disk-bytes", "2m", "--read-ahead", "2", "--movers", "2");
        assertEquals(2, r.status(), r.output());
        String line = r.output().lines().filter(l -> l.startsWith("tierkv decode: ")).findFirst().orElse("");
        assertTrue(line.contains("capacity exhausted") && line.endsWith("(the tiers are too small for this run: raise "
                + "their budgets, or lower what runs at once)"), r.output());
        assertFalse(r.output().contains("\tat "), r.output());
    }

    /** (a) A device that holds every block: both oracle cases. */
    @Test
    void deviceHoldsEverything() {
        TierDecoding.Setup s = setup(48, 48, null, TierKvStore.Read.STREAM);
        int steps = oracle.at("/greedy_from_bos/steps").asInt();
        assertEquals(256, steps);
        TierDecoding.Result bos = decode(s, bos(), steps);
        assertArrayEquals(ints(oracle.at("/greedy_from_bos/ids")), bos.branches().get(0));
        int[] next = ints(oracle.at("/prompt_case/greedy_next_64"));
        TierDecoding.Result p = decode(setup(48, 48, null, TierKvStore.Read.LEASE), promptIds(), next.length);
        assertArrayEquals(next, p.branches().get(0));
    }

    /**
     * (b) Device 4 blocks, host 4 blocks, LZ4 disk: blocks spill to disk and return.
     *
     * @param tmp a temporary directory for the disk tier
     */
    @Test
    void spillsToDiskAndBack(@TempDir Path tmp) {
        TierDecoding.Result bos = decode(setup(4, 4, tmp.resolve("a"), TierKvStore.Read.STREAM), bos(), 256);
        assertArrayEquals(ints(oracle.at("/greedy_from_bos/ids")), bos.branches().get(0));
        TierStats st = bos.stats();
        assertTrue(st.cache().demotions() > 0, "demotions");
        assertTrue(st.diskSpills().blocks() > 0, "disk spills");
        assertTrue(st.diskLoads().blocks() > 0, "disk loads");
        assertEquals(0, st.cache().failedPromotions());

        int[] next = ints(oracle.at("/prompt_case/greedy_next_64"));
        TierDecoding.Result p = decode(setup(4, 4, tmp.resolve("b"), TierKvStore.Read.LEASE), promptIds(), next.length);
        assertArrayEquals(next, p.branches().get(0));
        assertTrue(p.stats().cache().demotions() > 0, "demotions");
    }

    private static void equalsIndependentRuns(TierDecoding.Result tier, int[] prompt, int steps, int n) {
        TierDecoding.Result arrays = TierDecoding.arrays(model, prompt, steps, n);
        assertEquals(n, tier.branches().size());
        for (int i = 0; i < n; i++) {
            assertArrayEquals(arrays.branches().get(i), tier.branches().get(i), "sequence " + i);
            assertEquals(steps, tier.branches().get(i).length);
        }
        for (int i = 1; i < n; i++) {
            assertTrue(!Arrays.equals(tier.branches().get(0), tier.branches().get(i)), "branches diverge");
        }
    }

    /** (c) 4 sequences forked after the shared prompt, each equal to its independent run. */
    @Test
    void parallelForksEqualIndependentRuns() {
        int[] prompt = promptIds();
        int[] next = ints(oracle.at("/prompt_case/greedy_next_64"));
        TierDecoding.Result r = TierDecoding.tierkv(model, setup(48, 48, null, TierKvStore.Read.STREAM), prompt, 64, 4,
                TierDecoding.Share.FORK);
        equalsIndependentRuns(r, prompt, 64, 4);
        assertArrayEquals(next, r.branches().get(0));
        assertTrue(r.stats().cache().copiesOnWrite() >= 3, "the shared partial block is copied on write");
    }

    /**
     * (c) Forks under spill budgets, and sequences that share a two-block prompt by prefix matching.
     *
     * @param tmp a temporary directory for the disk tier
     */
    @Test
    void parallelPrefixAndSpillingForksEqualIndependentRuns(@TempDir Path tmp) {
        int[] greedy = ints(oracle.at("/greedy_from_bos/ids"));
        int[] prompt = new int[40];
        prompt[0] = 1;
        System.arraycopy(greedy, 0, prompt, 1, 39); // 40 tokens: 2 full blocks and a partial one
        TierDecoding.Result r = TierDecoding.tierkv(model, setup(48, 48, null, TierKvStore.Read.LEASE), prompt, 48, 4,
                TierDecoding.Share.PREFIX);
        equalsIndependentRuns(r, prompt, 48, 4);
        assertEquals(3 * 32, r.matched(), "each later sequence takes the 2 full prompt blocks from the cache");

        TierDecoding.Result spill = TierDecoding.tierkv(model, setup(12, 4, tmp, TierKvStore.Read.STREAM), prompt, 48, 4,
                TierDecoding.Share.FORK);
        equalsIndependentRuns(spill, prompt, 48, 4);
        assertTrue(spill.stats().cache().demotions() > 0, "demotions");
    }

    /** The command checks the oracle and prints both speeds. */
    @Test
    void commandChecksOracle() {
        StringWriter out = new StringWriter();
        CommandLine cl = TierKvCli.commandLine();
        cl.setOut(new PrintWriter(out, true));
        int status = cl.execute("decode", "--model-dir", dir.toString(), "--prompt",
                oracle.at("/prompt_case/prompt").asText(), "--steps", "64", "--parallel", "2", "--check", "--warmup",
                "0");
        assertEquals(0, status, out.toString());
        assertTrue(out.toString().contains("check:    OK: 64 tokens equal prompt_case"), out.toString());
        assertTrue(out.toString().contains("arrays"), out.toString());
        List<String> seqs = out.toString().lines().filter(l -> l.startsWith("seq ")).toList();
        assertEquals(2, seqs.size());
        assertTrue(seqs.stream().allMatch(l -> l.contains("equal to arrays")), seqs.toString());
    }

    /**
     * {@code --runs N} measures N rounds (arrays, the paged layout alone, TierKV), prints each
     * round's speeds and ratios and the medians, and still checks every sequence against the arrays.
     */
    @Test
    void runsPrintEveryRoundAndTheirMedians() {
        StringWriter out = new StringWriter();
        CommandLine cl = TierKvCli.commandLine();
        cl.setOut(new PrintWriter(out, true));
        int status = cl.execute("decode", "--model-dir", dir.toString(), "--steps", "16", "--warmup", "0", "--runs",
                "3");
        assertEquals(0, status, out.toString());
        List<String> rounds = out.toString().lines().filter(l -> l.startsWith("round ")).toList();
        assertEquals(3, rounds.size(), out.toString());
        double[] toArrays = new double[3];
        double[] toPaged = new double[3];
        for (int i = 0; i < 3; i++) {
            String line = rounds.get(i);
            assertTrue(line.startsWith("round " + (i + 1) + ":"), line);
            String[] words = line.split(" ");
            toPaged[i] = Double.parseDouble(words[words.length - 1]);
            toArrays[i] = Double.parseDouble(words[words.length - 5].replace(",", ""));
            assertTrue(toArrays[i] > 0 && toPaged[i] > 0, line);
        }
        Arrays.sort(toArrays);
        Arrays.sort(toPaged);
        String speed = out.toString().lines().filter(l -> l.startsWith("speed:")).findFirst().orElseThrow();
        assertTrue(speed.contains(String.format(java.util.Locale.ROOT, "medians of 3 rounds; the rounds' ratios: %.3f "
                + "(min %.3f, max %.3f)", toArrays[1], toArrays[0], toArrays[2])), speed);
        String paging = out.toString().lines().filter(l -> l.startsWith("paging:")).findFirst().orElseThrow();
        assertTrue(paging.endsWith(" (the manager's)"), paging);
        String[] words = paging.split(" ");
        double printed = Double.parseDouble(words[words.length - 3]);
        // The round lines print three decimals and this line two: compare within their rounding.
        assertEquals(toPaged[1], printed, 0.0051, paging);
        assertTrue(out.toString().contains("equal to arrays"), out.toString());
    }
}
