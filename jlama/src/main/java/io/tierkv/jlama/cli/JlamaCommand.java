package io.tierkv.jlama.cli;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.model.ModelSupport;
import com.github.tjake.jlama.safetensors.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.jlama.Generation;
import io.tierkv.jlama.JlamaSession;
import io.tierkv.jlama.ModelFingerprint;
import io.tierkv.jlama.PrefixHits;
import io.tierkv.jlama.Prefill;
import io.tierkv.jlama.StockJlama;
import io.tierkv.jlama.TierKvJlama;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.KvBlockManagerBuilder;
import io.tierkv.tiers.TierStats;
import io.tierkv.tiers.disk.DiskOptions;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.IntConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tierkv jlama}: loads a Hugging Face checkpoint with Jlama, generates greedily with stock
 * Jlama (its own KV) and with Jlama on TierKV ({@link TierKvJlama}) for {@code --sessions K}
 * sessions, and prints both texts, time to first token and decode tokens/s side by side, and the
 * prefix hits by tier. Session 1's prompt is {@code --prompt}; session i > 1 appends the first
 * {@code i - 1} tokens session 1 generated (a follow-up turn), so its full blocks of the shared
 * prefix come from the cache. With {@code --persistent} over a {@code --disk-dir}, a second run
 * takes them from disk. Exit status: 0 when every session's ids are identical (and, for a shipped
 * model's ref.json prompt, equal to its greedy ids), 1 when they differ, 2 for bad usage.
 */
@Command(name = "jlama", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Generate with stock Jlama and with Jlama on TierKV (prefix reuse from any tier) and compare.",
            "Exit status: 0 identical ids, 1 they differ (or differ from ref.json), 2 bad usage."})
public final class JlamaCommand implements Callable<Integer> {

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Option(names = "--model-dir", paramLabel = "DIR", required = true,
            description = "Hugging Face checkpoint Jlama loads (config.json, model.safetensors, tokenizer.json), "
                    + "for example ../shared/data/models/jlama-random-d256")
    private Path modelDir;

    @Option(names = "--prompt", paramLabel = "TEXT", required = true, description = "prompt text (BOS is prepended)")
    private String prompt;

    @Option(names = "--steps", paramLabel = "N", defaultValue = "32", description = "tokens to generate per "
            + "session (default: ${DEFAULT-VALUE})")
    private int steps;

    @Option(names = "--sessions", paramLabel = "K", defaultValue = "2", description = "sessions sharing the prompt "
            + "as prefix; the later ones take its full blocks from the cache (default: ${DEFAULT-VALUE})")
    private int sessions;

    @Option(names = "--block-tokens", paramLabel = "B", defaultValue = "16", description = "tokens per block "
            + "(default: ${DEFAULT-VALUE})")
    private int blockTokens;

    @Option(names = "--device-blocks", paramLabel = "N", defaultValue = "256", description = "device budget in "
            + "blocks (default: ${DEFAULT-VALUE}); at least the blocks of one session")
    private int deviceBlocks;

    @Option(names = "--host-blocks", paramLabel = "N", defaultValue = "256", description = "host budget in blocks "
            + "(default: ${DEFAULT-VALUE})")
    private int hostBlocks;

    @Option(names = "--disk-bytes", paramLabel = "SIZE", defaultValue = "64m", description = "disk budget with "
            + "--disk-dir, for example 64m or 1g; refused without --disk-dir, where it has no effect "
            + "(default: ${DEFAULT-VALUE})")
    private String diskBytes;

    @Option(names = "--disk-dir", paramLabel = "DIR", description = "a disk tier in this directory (default: none)")
    private Path diskDir;

    @Option(names = "--persistent", description = "keep the disk tier's records on exit (every cached block is "
            + "spilled to disk first); a later run over the same --disk-dir serves them as prefix hits")
    private boolean persistent;

    @Option(names = "--spill-every-step", description = "after every forward step demote every unleased block to "
            + "the host and spill it to disk (with --disk-dir), so each step promotes them back")
    private boolean spillEveryStep;

    @Option(names = "--prefill", paramLabel = "HOW", defaultValue = "token", description = "how both sides "
            + "compute the uncached prompt: token (one Jlama forward per position, exact) or batched (one Jlama "
            + "batchForward, which Jlama 0.8.4 gets wrong for some lengths on AVX2 machines) (default: ${DEFAULT-VALUE})")
    private String prefillName;

    @Option(names = "--check", description = "also generate with stock Jlama and compare the ids (and with "
            + "MODEL_DIR/ref.json's greedy ids for its prompt)")
    private boolean check;

    @picocli.CommandLine.Mixin
    private io.tierkv.observe.ObserveOptions observe = new io.tierkv.observe.ObserveOptions();

    /** {@code --prefill}, parsed by {@link #validate()}. */
    private Prefill prefill;

    /** {@link ModelFingerprint} of {@code --model-dir}: every session's extra key. */
    private long modelKey;

    /** The disk tier's options from {@code --disk-dir} and {@code --disk-bytes}, or null without a disk. */
    private DiskOptions disk;

    /** Creates the command (picocli instantiates it). */
    public JlamaCommand() {
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            return run(out);
        } catch (IllegalArgumentException e) {
            err.println("tierkv jlama: " + e.getMessage());
            return 2;
        } finally {
            out.flush();
        }
    }

    private int run(PrintWriter out) {
        validate(); // every option, before the model loads or anything is printed
        modelKey = ModelFingerprint.of(modelDir);
        AbstractModel model;
        try {
            model = ModelSupport.loadModel(modelDir.toFile(), DType.F32, DType.F32);
        } catch (RuntimeException e) { // Jlama's own parse errors: a directory that holds no model it can load
            throw new IllegalArgumentException("--model-dir " + modelDir + ": Jlama cannot load a model from it ("
                    + rootMessage(e) + ")", e);
        }
        try {
            return compare(model, out);
        } finally {
            model.close();
        }
    }

    /**
     * Checks every option before the model loads: the numbers, {@code --prefill}, the disk options
     * ({@code --disk-bytes} given without {@code --disk-dir} is refused as an option with no
     * effect), the observation options and the model directory; sets {@link #prefill} and
     * {@link #disk}.
     */
    private void validate() {
        positive("--steps", steps);
        positive("--sessions", sessions);
        positive("--block-tokens", blockTokens);
        positive("--device-blocks", deviceBlocks);
        int recent = spillEveryStep ? 0 : io.tierkv.tiers.KvBlockManagerBuilder.DEFAULT_RECENT_DEVICE_BLOCKS;
        if (deviceBlocks <= recent) {
            throw new IllegalArgumentException("--device-blocks " + deviceBlocks + " (expected >= " + (recent + 1)
                    + ": each session's " + recent + " most recent blocks stay on the device, and one more is written)");
        }
        positive("--host-blocks", hostBlocks);
        prefill = switch (prefillName.toLowerCase(Locale.ROOT)) {
            case "token" -> Prefill.TOKEN_BY_TOKEN;
            case "batched" -> Prefill.BATCHED;
            default -> throw new IllegalArgumentException("--prefill '" + prefillName + "' (expected token or batched)");
        };
        if (persistent && diskDir == null) {
            throw new IllegalArgumentException("--persistent needs --disk-dir");
        }
        if (diskDir == null && spec.commandLine().getParseResult().hasMatchedOption("--disk-bytes")) {
            throw new IllegalArgumentException("--disk-bytes " + diskBytes + " without --disk-dir (expected --disk-dir "
                    + "DIR: the disk budget has no effect without a disk tier)");
        }
        if (diskDir != null) {
            long budget = parseBytes(diskBytes);
            try {
                disk = DiskOptions.at(diskDir).withBudgetBytes(budget)
                        .withSegmentBytes(Math.min(DiskOptions.DEFAULT_SEGMENT_BYTES,
                                Math.max(DiskOptions.MIN_SEGMENT_BYTES, budget / 4)))
                        .withPersistent(persistent);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--disk-bytes " + diskBytes + ": " + e.getMessage(), e);
            }
        }
        observe.check();
        Path config = modelDir.resolve("config.json");
        if (!Files.isRegularFile(config)) {
            throw new IllegalArgumentException("--model-dir " + modelDir + ": no config.json (expected a checkpoint "
                    + "folder with config.json)");
        }
        int context = contextLength(config);
        if (context > 0 && steps > context) { // the prompt takes at least one position too; checked exactly after the load
            throw new IllegalArgumentException("--steps " + steps + " (expected <= " + context + ", the model's context "
                    + "length, max_position_embeddings in " + config + ", which holds the prompt and the steps)");
        }
    }

    /**
     * {@return the context length a Hugging Face config.json gives ({@code max_position_embeddings},
     * as Jlama's {@code LlamaConfig} reads it), or -1 if it gives none or cannot be read: the model
     * load then reports the file}
     */
    private static int contextLength(Path config) {
        try {
            return new com.fasterxml.jackson.databind.ObjectMapper().readTree(config.toFile())
                    .path("max_position_embeddings").asInt(-1);
        } catch (IOException e) {
            return -1;
        }
    }

    private static void positive(String name, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + " " + value + " (expected >= 1)");
        }
    }

    private int compare(AbstractModel model, PrintWriter out) {
        int[] base = encode(model, prompt);
        KvLayout layout = TierKvJlama.layoutFor(model, blockTokens);
        var c = model.getConfig();
        out.printf(Locale.ROOT, "model:        %s (L=%d, %d heads, %d KV heads, head size %d, vocab %d, context %d)%n",
                modelDir.getFileName(), c.numberOfLayers, c.numberOfHeads, c.numberOfKeyValueHeads, c.headSize,
                c.vocabularySize, c.contextLength);
        out.printf(Locale.ROOT, "layout:       B=%d F32, %s per block%n", blockTokens, bytes(layout.bytesPerBlock()));
        long bpb = layout.bytesPerBlock();
        out.printf(Locale.ROOT, "tiers:        device %d blocks (emulated), host %d blocks%s%s%n", deviceBlocks, hostBlocks,
                diskDir == null ? "" : ", disk " + bytes(parseBytes(diskBytes)) + " in " + diskDir,
                persistent ? " (persistent)" : "");
        out.printf(Locale.ROOT, "prompt:       %d tokens %s, prefill %s%n", base.length, Arrays.toString(base),
                prefillName.toLowerCase(Locale.ROOT));
        warmUp(model, layout, base, prefill);

        boolean same = true;
        PrefixHits hits = PrefixHits.NONE;
        long cachedTokens = 0;
        long promptTokens = 0;
        int[] follow = null;
        try (io.tierkv.observe.Observation observation = observe.open(); // KV events and metrics of the measured run
             EmulatedDevice gpu = new EmulatedDevice(Math.max(EmulatedDevice.defaultCapacityBytes(), (deviceBlocks + 1) * bpb));
             KvBlockManager kv = manager(layout, gpu, disk, observation);
             TierKvJlama jlama = TierKvJlama.install(model, kv)) {
            IntConsumer between = spillEveryStep ? length -> {
                kv.demote(Integer.MAX_VALUE);
                kv.evictHost(Integer.MAX_VALUE);
            } : length -> { };
            for (int s = 0; s < sessions; s++) {
                int[] p = s == 0 || follow == null ? base
                        : IntStream.concat(IntStream.of(base), IntStream.of(follow).limit(s)).toArray();
                Generation t;
                try (JlamaSession session = jlama.openSession(SequenceOptions.salt("tierkv-jlama")
                        .withExtraKeys(modelKey))) { // another model's KV in a persistent tier is a miss
                    t = session.generate(p, steps, prefill, false, between);
                }
                if (s == 0) {
                    follow = t.tokens();
                }
                hits = hits.plus(t.hits());
                cachedTokens += t.cachedTokens();
                promptTokens += p.length;
                out.printf(Locale.ROOT, "session %d:    prompt %d tokens, %d cached (device %d, host %d, disk %d blocks)%n",
                        s + 1, p.length, t.cachedTokens(), t.hits().device(), t.hits().host(), t.hits().disk());
                if (check) {
                    Generation g = StockJlama.generate(model, p, steps, prefill, false);
                    line(out, "stock", model, g);
                    line(out, "tierkv", model, t);
                    boolean equal = Arrays.equals(g.tokens(), t.tokens());
                    same &= equal;
                    out.printf(Locale.ROOT, "  ids:        %s%n", equal ? "identical (" + t.tokens().length + " tokens)"
                            : "DIFFER: stock " + Arrays.toString(g.tokens()) + " tierkv " + Arrays.toString(t.tokens()));
                    if (s == 0) {
                        same &= checkRef(out, p, t.tokens());
                    }
                } else {
                    line(out, "tierkv", model, t);
                }
            }
            if (persistent) { // the disk keeps only what was spilled: send every cached block down before closing
                kv.demote(Integer.MAX_VALUE);
                kv.evictHost(Integer.MAX_VALUE);
            }
            TierStats st = kv.stats();
            out.printf(Locale.ROOT, "prefix hits:  device %d, host %d, disk %d blocks (%d of %d prompt tokens cached)%n",
                    hits.device(), hits.host(), hits.disk(), cachedTokens, promptTokens);
            out.printf(Locale.ROOT, "moved:        demotions %d, promotions %d, disk spills %d, disk loads %d%n",
                    st.demotions().blocks(), st.promotions().blocks(), st.diskSpills().blocks(),
                    st.diskLoads().blocks() + st.diskToHost().blocks());
            if (persistent && st.disk() != null) {
                out.printf(Locale.ROOT, "persisted:    %d blocks on disk in %s for the next run%n", st.disk().blockCount(),
                        diskDir);
            }
            List<String> problems = kv.checkInvariants();
            if (!problems.isEmpty()) {
                out.println("invariants:   " + problems);
                same = false;
            }
        }
        out.println("result:       " + (!check ? "generated (no --check)" : same ? "OK" : "FAILED"));
        return same ? 0 : 1;
    }

    /** The message of the innermost cause, its first line. */
    private static String rootMessage(Throwable e) {
        Throwable r = e;
        while (r.getCause() != null && r.getCause() != r) {
            r = r.getCause();
        }
        String m = r.getMessage() == null ? r.getClass().getSimpleName() : r.getMessage();
        return m.lines().findFirst().orElse(m);
    }

    /** Runs both paths once on a throwaway manager, so that neither side's timing pays for the JIT alone. */
    private void warmUp(AbstractModel model, KvLayout layout, int[] base, Prefill prefill) {
        int n = Math.min(4, steps);
        try {
            StockJlama.generate(model, base, n, prefill, false);
        } catch (IndexOutOfBoundsException e) { // weights of other shapes than config.json says, before TierKV is involved
            throw new IllegalArgumentException("--model-dir " + modelDir + ": stock Jlama cannot run this model (its "
                    + "weights do not match its config.json: " + rootMessage(e) + ")", e);
        }
        long bytes = (long) deviceBlocks * layout.bytesPerBlock();
        try (EmulatedDevice gpu = new EmulatedDevice(Math.max(EmulatedDevice.defaultCapacityBytes(), bytes + layout.bytesPerBlock()));
             KvBlockManager kv = manager(layout, gpu, null, io.tierkv.observe.Observation.none());
             TierKvJlama jlama = TierKvJlama.install(model, kv);
             JlamaSession s = jlama.openSession(SequenceOptions.salt("tierkv-jlama-warm-up"))) {
            s.generate(base, n, prefill, false, length -> { });
        }
    }

    private KvBlockManager manager(KvLayout layout, EmulatedDevice gpu, DiskOptions disk,
            io.tierkv.observe.Observation observation) {
        KvBlockManagerBuilder b = KvBlockManager.builder(layout)
                .device(gpu, (long) deviceBlocks * layout.bytesPerBlock())
                .host((long) hostBlocks * layout.bytesPerBlock());
        if (spillEveryStep) {
            b.recentDeviceBlocks(0).movers(0);
        }
        KvBlockManager kv = observation.configure(disk == null ? b : b.disk(disk)).build();
        observation.attach(kv);
        return kv;
    }

    private boolean checkRef(PrintWriter out, int[] p, int[] tokens) {
        Path ref = modelDir.resolve("ref.json");
        if (!Files.isRegularFile(ref)) {
            return true;
        }
        String json;
        try {
            json = Files.readString(ref);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + ref + ": " + e.getMessage());
        }
        int[] refPrompt = ints(json, "prompt");
        if (!Arrays.equals(refPrompt, p)) {
            out.println("  ref.json:   not its prompt " + Arrays.toString(refPrompt) + ", not compared");
            return true;
        }
        int[] greedy = ints(json, "greedy");
        int n = Math.min(greedy.length, tokens.length);
        boolean equal = Arrays.equals(Arrays.copyOf(greedy, n), Arrays.copyOf(tokens, n));
        out.printf(Locale.ROOT, "  ref.json:   %s%n", equal ? "greedy ids equal (" + n + " of " + greedy.length + ")"
                : "DIFFER from greedy " + Arrays.toString(greedy));
        return equal;
    }

    private static int[] ints(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\"\\s*:\\s*\\[([^\\]]*)]").matcher(json);
        if (!m.find()) {
            return new int[0];
        }
        return Arrays.stream(m.group(1).split(",")).map(String::trim).filter(x -> !x.isEmpty())
                .mapToInt(Integer::parseInt).toArray();
    }

    private static void line(PrintWriter out, String who, AbstractModel model, Generation g) {
        long[] ids = Arrays.stream(g.tokens()).asLongStream().toArray();
        String text = model.getTokenizer().decode(ids).replace("\n", "\\n");
        out.printf(Locale.ROOT, "  %-7s     ttft %8.2f ms, %8.1f tokens/s  \"%s\"%n", who + ":", g.firstTokenNanos() / 1e6,
                g.decodeTokensPerSecond(), text.length() > 100 ? text.substring(0, 100) + "..." : text);
    }

    /**
     * The token ids of a prompt: BOS, then the tokenizer's ids of the text.
     *
     * @param model the model
     * @param text  the prompt text
     * @return the ids
     */
    static int[] encode(AbstractModel model, String text) {
        long[] ids = model.getTokenizer().encode(text);
        List<Integer> all = new ArrayList<>();
        all.add(model.getConfig().bosToken);
        for (long id : ids) {
            all.add(Math.toIntExact(id));
        }
        return all.stream().mapToInt(Integer::intValue).toArray();
    }

    private static long parseBytes(String text) {
        String s = text.trim().toLowerCase(Locale.ROOT);
        long unit = 1;
        if (s.endsWith("k") || s.endsWith("m") || s.endsWith("g")) {
            unit = switch (s.charAt(s.length() - 1)) {
                case 'k' -> 1L << 10;
                case 'm' -> 1L << 20;
                default -> 1L << 30;
            };
            s = s.substring(0, s.length() - 1);
        }
        try {
            long v = Long.parseLong(s);
            if (v < 1) {
                throw new NumberFormatException();
            }
            return Math.multiplyExact(v, unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("--disk-bytes " + text + " (expected a positive size such as 64m or 1g)");
        }
    }

    private static String bytes(long b) {
        return b >= 1 << 20 ? String.format(Locale.ROOT, "%.2f MiB", b / 1048576.0)
                : String.format(Locale.ROOT, "%.2f KiB", b / 1024.0);
    }
}
