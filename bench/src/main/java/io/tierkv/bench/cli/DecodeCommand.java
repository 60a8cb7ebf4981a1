package io.tierkv.bench.cli;

import io.tierkv.observe.Observation;
import io.tierkv.observe.ObserveOptions;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierkv.bench.model.LlamaConfig;
import io.tierkv.bench.model.LlamaModel;
import io.tierkv.bench.model.Tokenizer;
import io.tierkv.tiers.TierStats;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tierkv decode}: greedy decoding of a llama2.c checkpoint (stories260K by default) whose
 * K/V live only in TierKV ({@link TierKvStore}), beside the same forward pass over plain Java
 * arrays in the same process; checks that every branch's tokens equal the arrays' and, with
 * {@code --check}, the oracle's.
 */
@Command(name = "decode", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run a llama2.c model (stories260K) with its K/V in TierKV and compare with plain arrays.",
            "Exit status: 0, or 1 when TierKV's tokens differ from the arrays' or from --check."})
public final class DecodeCommand implements Callable<Integer> {

    /** The model directory used when {@code --model-dir} is not given, relative to the working directory. */
    public static final String DEFAULT_MODEL_DIR = "../shared/data/models/stories260K";

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Option(names = "--model-dir", paramLabel = "DIR", description = "holds stories260K.bin, tok512.bin and "
            + "oracle_greedy.json (default: " + DEFAULT_MODEL_DIR + ", else the same path next to the jar's checkout)")
    private Path modelDir;

    @Option(names = "--checkpoint", paramLabel = "FILE", description = "llama2.c checkpoint (default: "
            + "MODEL_DIR/stories260K.bin)")
    private Path checkpoint;

    @Option(names = "--tokenizer", paramLabel = "FILE", description = "llama2.c tokenizer (default: MODEL_DIR/tok512.bin)")
    private Path tokenizer;

    @Option(names = "--prompt", paramLabel = "TEXT", description = "prompt text (default: none, start from BOS)")
    private String prompt;

    @Option(names = "--steps", paramLabel = "N", defaultValue = "256", description = "tokens to generate per "
            + "sequence (default: ${DEFAULT-VALUE})")
    private int steps;

    @Option(names = "--parallel", paramLabel = "N", defaultValue = "1", description = "sequences sharing the "
            + "prompt; sequence i starts from the i-th most likely token, then greedy (default: ${DEFAULT-VALUE})")
    private int parallel;

    @Option(names = "--share", paramLabel = "HOW", defaultValue = "fork", description = "how sequences 2.. share "
            + "the prompt: fork (Sequence.fork after the prompt) or prefix (matchPrefix of its full blocks) "
            + "(default: ${DEFAULT-VALUE})")
    private TierDecoding.Share share;

    @Option(names = "--check", paramLabel = "FILE", arity = "0..1", fallbackValue = "",
            description = "compare with an oracle json (oracle_greedy.json: greedy_from_bos, prompt_case); "
                    + "without FILE: MODEL_DIR/oracle_greedy.json")
    private String check;

    @Option(names = "--block-tokens", paramLabel = "B", defaultValue = "16", description = "tokens per block "
            + "(default: ${DEFAULT-VALUE}: 20 KiB F32 blocks for stories260K)")
    private int blockTokens;

    @Option(names = "--device-blocks", paramLabel = "N", description = "device budget in blocks, at least "
            + "--recent-blocks + 2 (default: enough for every sequence)")
    private Integer deviceBlocks;

    @Option(names = "--host-blocks", paramLabel = "N", description = "host budget in blocks, at least 1 (default: as "
            + "many as the device)")
    private Integer hostBlocks;

    @Option(names = "--disk-bytes", paramLabel = "SIZE", defaultValue = "0", description = "disk tier budget, e.g. "
            + "16m; 0 = none (default)")
    private String diskBytes;

    @Option(names = "--disk-dir", paramLabel = "DIR", description = "disk tier directory (default: temporary)")
    private Path diskDir;

    @CommandLine.Mixin
    private ManagerOptions manager;

    @CommandLine.Mixin
    private ObserveOptions observe;

    @Option(names = "--read", paramLabel = "HOW", defaultValue = "stream", description = "attention reads blocks by "
            + "stream (KvBlockManager.stream, read-ahead) or lease (Sequence.lease per block) (default: "
            + "${DEFAULT-VALUE})")
    private TierKvStore.Read read;

    @Option(names = "--read-ahead", paramLabel = "N", defaultValue = "0", description = "blocks the stream asks "
            + "the mover to promote ahead (default: ${DEFAULT-VALUE}: on 2 cores, waking the mover per block costs "
            + "more than it overlaps)")
    private int readAhead;

    @Option(names = "--warmup", paramLabel = "N", defaultValue = "1", description = "untimed runs of both stores "
            + "first, for the JIT (default: ${DEFAULT-VALUE})")
    private int warmup;

    @Option(names = "--runs", paramLabel = "N", defaultValue = "1", description = "measured rounds, each a run over "
            + "arrays, over the paged layout alone (no manager) and over TierKV, the order reversed every other round; "
            + "the speed lines give the medians of the rounds (default: ${DEFAULT-VALUE})")
    private int runs;

    /** Creates the command (picocli instantiates it). */
    public DecodeCommand() {
    }

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        Check.atLeast("--steps", steps, 1);
        Check.atLeast("--parallel", parallel, 1);
        Check.atLeast("--block-tokens", blockTokens, 1);
        manager.check();
        observe.check();
        int recentBlocks = manager.recentBlocks();
        if (deviceBlocks != null) {
            Check.atLeast("--device-blocks", deviceBlocks, recentBlocks + 2L);
        }
        if (hostBlocks != null) {
            Check.atLeast("--host-blocks", hostBlocks, 1);
        }
        long disk = Check.bytes("--disk-bytes", diskBytes);
        Check.atLeast("--read-ahead", readAhead, 0);
        Check.atLeast("--warmup", warmup, 0);
        Check.between("--runs", runs, 1, 100, "measured rounds");
        Path dir = modelDir != null ? modelDir : defaultModelDir();
        Path checkpointFile = modelFile("--checkpoint", checkpoint, dir, "stories260K.bin");
        Path tokenizerFile = modelFile("--tokenizer", tokenizer, dir, "tok512.bin");
        Path oracle = null;
        if (check != null) {
            oracle = check.isEmpty() ? modelFile("--check", null, dir, "oracle_greedy.json")
                    : Check.inputFile("--check", Path.of(check), "an oracle json such as oracle_greedy.json");
        }
        LlamaModel model = LlamaModel.load(checkpointFile);
        LlamaConfig cfg = model.config();
        Tokenizer tok = Tokenizer.load(tokenizerFile, cfg.vocabSize());
        int[] promptIds = prompt == null ? new int[] {Tokenizer.BOS} : tok.encode(prompt, true, false);
        Check.between("--parallel", parallel, 1, cfg.vocabSize(), "the model's vocabulary: sequence i starts from "
                + "the i-th most likely token");
        Check.between("--steps", steps, 1, cfg.seqLen() - promptIds.length, "seq_len " + cfg.seqLen() + " - prompt "
                + promptIds.length + " tokens");
        if (oracle != null && oracleCase(new ObjectMapper().readTree(oracle.toFile()), promptIds) == null) {
            throw new IllegalArgumentException("--check " + oracle + ": no case for this prompt (expected the BOS "
                    + "alone, without --prompt, or prompt_case's prompt)");
        }
        int perSeq = (promptIds.length + steps + blockTokens - 1) / blockTokens;
        int dev = deviceBlocks != null ? deviceBlocks : 2 * perSeq * parallel + recentBlocks + 2; // under 50%: no proactive demotion
        TierDecoding.Setup setup = new TierDecoding.Setup(blockTokens, dev, hostBlocks != null ? hostBlocks : dev,
                diskDir, disk, manager.compression(), recentBlocks, manager.movers(), read, readAhead);

        for (int w = 0; w < warmup; w++) {
            TierDecoding.arrays(model, promptIds, steps, parallel);
            TierDecoding.paged(model, promptIds, steps, parallel, blockTokens);
            TierDecoding.tierkv(model, setup, promptIds, steps, parallel, share);
        }
        // Rounds reverse their order every other time: on a shared machine a run's place in a round
        // changes its speed by itself.
        double[] arraysRate = new double[runs];
        double[] pagedRate = new double[runs];
        double[] tierRate = new double[runs];
        double[] tierToArrays = new double[runs];
        double[] tierToPaged = new double[runs];
        double[] pagedToArrays = new double[runs];
        TierDecoding.Result arrays = null;
        TierDecoding.Result tier = null;
        for (int r = 0; r < runs; r++) {
            if (r % 2 == 0) {
                arrays = TierDecoding.arrays(model, promptIds, steps, parallel);
            } else {
                tier = measured(model, setup, promptIds);
            }
            pagedRate[r] = TierDecoding.paged(model, promptIds, steps, parallel, blockTokens).tokensPerSecond();
            if (r % 2 == 0) {
                tier = measured(model, setup, promptIds);
            } else {
                arrays = TierDecoding.arrays(model, promptIds, steps, parallel);
            }
            arraysRate[r] = arrays.tokensPerSecond();
            tierRate[r] = tier.tokensPerSecond();
            tierToArrays[r] = tierRate[r] / arraysRate[r];
            tierToPaged[r] = tierRate[r] / pagedRate[r];
            pagedToArrays[r] = pagedRate[r] / arraysRate[r];
            if (runs > 1) {
                out.printf(Locale.ROOT, "round %d:  TierKV %.0f, paged layout alone %.0f, arrays %.0f tokens/s; TierKV / "
                        + "arrays %.3f, TierKV / paged %.3f%n", r + 1, tierRate[r], pagedRate[r], arraysRate[r],
                        tierToArrays[r], tierToPaged[r]);
            }
        }

        out.printf(Locale.ROOT, "model:    %s (dim %d, %d layers, %d heads, %d KV heads, vocab %d)%n", dir, cfg.dim(),
                cfg.layers(), cfg.heads(), cfg.kvHeads(), cfg.vocabSize());
        out.printf(Locale.ROOT, "layout:   %s, B=%d, %s per block; device %d, host %d blocks%s; read %s%n",
                Replayer.layoutText(cfg.kvLayout(blockTokens)), blockTokens,
                Sizes.bytes(cfg.kvLayout(blockTokens).bytesPerBlock()), dev, setup.hostBlocks(),
                setup.diskBytes() > 0 ? ", disk " + Sizes.bytes(setup.diskBytes()) + " " + manager.compression() : "",
                read.name().toLowerCase(Locale.ROOT));
        out.printf(Locale.ROOT, "prompt:   %s (%d tokens)%n", prompt == null ? "(BOS)" : '"' + prompt + '"',
                promptIds.length);
        boolean ok = true;
        for (int i = 0; i < parallel; i++) {
            int[] t = tier.branches().get(i);
            boolean same = Arrays.equals(t, arrays.branches().get(i));
            ok &= same;
            String text = tok.decode(concat(promptIds, t)).replace("\n", "\\n");
            out.printf(Locale.ROOT, "seq %d:    %s [%d tokens, %s arrays]%n", i, text, t.length,
                    same ? "equal to" : "DIFFERENT FROM");
        }
        TierStats s = tier.stats();
        out.printf(Locale.ROOT, "tiers:    demotions %d, promotions %d (from disk %d), disk spills %d, copies on write "
                + "%d, prefix hits %d blocks (%d below the device)%s%n", s.cache().demotions(),
                s.cache().promotions(), s.diskLoads().blocks(), s.diskSpills().blocks(), s.cache().copiesOnWrite(),
                s.cache().prefixHitBlocks(), s.cache().prefixHitBlocksBelow(),
                share == TierDecoding.Share.PREFIX && parallel > 1 ? ", " + tier.matched() + " prompt tokens matched" : "");
        out.printf(Locale.ROOT, "speed:    TierKV %.0f tokens/s (%d forward passes), arrays %.0f tokens/s (%d), "
                + "ratio %.2f%s%n", Medians.median(tierRate), tier.forwards(), Medians.median(arraysRate),
                arrays.forwards(), Medians.median(tierToArrays), runs > 1 ? " (medians of " + runs + " rounds; "
                + "the rounds' ratios: " + Medians.medianAndRange(tierToArrays) + ")" : "");
        out.printf(Locale.ROOT, "paging:   the same blocks in plain memory without the manager %.0f tokens/s: paged / "
                + "arrays %.2f (the layout's own cost), TierKV / paged %.2f (the manager's)%n",
                Medians.median(pagedRate), Medians.median(pagedToArrays), Medians.median(tierToPaged));
        if (oracle != null) {
            String verdict = checkOracle(oracle, promptIds, tier.branches().get(0));
            out.println("check:    " + verdict);
            ok &= !verdict.startsWith("MISMATCH");
        }
        out.flush();
        return ok ? 0 : 1;
    }

    /** One measured TierKV run, observed as the options ask (the warm-ups are not). */
    private TierDecoding.Result measured(LlamaModel model, TierDecoding.Setup setup, int[] promptIds) {
        try (Observation observation = observe.open()) {
            return TierDecoding.tierkv(model, setup, promptIds, steps, parallel, share, observation);
        }
    }

    /**
     * Compares greedy ids with an oracle file: {@code greedy_from_bos.ids} when the prompt is BOS
     * alone, {@code prompt_case.greedy_next_64} when the prompt ids equal
     * {@code prompt_case.prompt_ids_with_bos}; the first {@code min(generated, oracle)} ids.
     *
     * @param file      the oracle json
     * @param promptIds the prompt ids
     * @param ids       the greedy ids generated
     * @return "OK ...", "SKIPPED ..." when the oracle has no case for the prompt, or "MISMATCH ..." at the
     *         first difference
     * @throws IOException if the file cannot be read
     */
    static String checkOracle(Path file, int[] promptIds, int[] ids) throws IOException {
        JsonNode root = new ObjectMapper().readTree(file.toFile());
        String which = oracleCase(root, promptIds);
        if (which == null) {
            return "SKIPPED: " + file + " has no case for this prompt (BOS alone, or prompt_case's prompt)";
        }
        int[] expected = ints(root.path(which).path(which.equals("greedy_from_bos") ? "ids" : "greedy_next_64"));
        int n = Math.min(expected.length, ids.length);
        for (int i = 0; i < n; i++) {
            if (expected[i] != ids[i]) {
                return "MISMATCH with " + which + " at step " + i + ": " + ids[i] + " (expected " + expected[i] + ")";
            }
        }
        return "OK: " + n + " tokens equal " + which + " in " + file.getFileName();
    }

    /**
     * The oracle's case for a prompt: {@code greedy_from_bos} for the BOS alone, {@code prompt_case}
     * for its prompt ids, else null.
     */
    private static String oracleCase(JsonNode root, int[] promptIds) {
        if (promptIds.length == 1 && promptIds[0] == root.path("greedy_from_bos").path("start_token").asInt(-1)) {
            return "greedy_from_bos";
        }
        if (Arrays.equals(promptIds, ints(root.path("prompt_case").path("prompt_ids_with_bos")))) {
            return "prompt_case";
        }
        return null;
    }

    /**
     * A model file: the option's value if given, else {@code name} in the model directory; it must
     * exist, and the message says what was looked for and where the model comes from.
     */
    private Path modelFile(String option, Path given, Path dir, String name) {
        if (given != null) {
            return Check.inputFile(option, given, "a llama2.c file");
        }
        Path file = dir.resolve(name);
        if (!Files.isRegularFile(file)) {
            String from = modelDir != null ? "--model-dir " + modelDir : "the default model directory " + dir;
            throw new IllegalArgumentException(from + ": " + name + " not found (looked for "
                    + file.toAbsolutePath().normalize() + "; stories260K.bin, tok512.bin and oracle_greedy.json come "
                    + "from karpathy/tinyllamas on Hugging Face and llama2.c, see ../shared/data/models/stories260K/"
                    + "README.md; pass --model-dir DIR)");
        }
        return file;
    }

    private static int[] ints(JsonNode array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asInt();
        }
        return out;
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /**
     * {@value #DEFAULT_MODEL_DIR} if it exists, else the same relative path from the checkout the
     * running jar was built in ({@code bench/target/tierkv.jar}).
     *
     * @return the directory
     */
    static Path defaultModelDir() {
        Path p = Path.of(DEFAULT_MODEL_DIR);
        if (Files.isDirectory(p)) {
            return p;
        }
        try {
            Path jar = Path.of(DecodeCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (Path up = jar.getParent(); up != null; up = up.getParent()) {
                Path candidate = up.resolve(DEFAULT_MODEL_DIR).normalize();
                if (Files.isDirectory(candidate)) {
                    return candidate;
                }
            }
        } catch (java.net.URISyntaxException | SecurityException | NullPointerException e) {
            // fall through
        }
        return p;
    }
}
