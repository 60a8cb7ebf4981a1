package io.tierkv.bench.cli;

import io.tierkv.observe.Observation;
import io.tierkv.observe.ObserveOptions;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tierkv replay}: replays a serving trace (or the built-in generator) through a real KV
 * block manager and reports hit rates by tier, bytes moved, latency and throughput. See
 * {@link Replayer} for what one request does and {@link ReplayReport} for the definitions.
 */
@Command(name = "replay", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Replay a serving trace through a real KV block manager (device, host and disk tiers).",
            "With no --trace, replays the built-in seeded multi-turn generator (1,000 requests).",
            "Exit status: 0, or 1 when a block read back differed from what was written, an invariant broke, or a "
                    + "matched block was lost below with no damaged disk record found to explain it."})
public final class ReplayCommand implements Callable<Integer> {

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Option(names = "--trace", paramLabel = "FILE",
            description = "Mooncake .jsonl or Azure .csv trace; absent: the built-in generator")
    private Path trace;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "auto",
            description = "auto (by extension), mooncake, azure or generator (default: ${DEFAULT-VALUE})")
    private TraceInput.Format format;

    @Option(names = "--requests", paramLabel = "N",
            description = "replay only the first N requests, N >= 1 (the generator makes N; default: 1000 for it, "
                    + "all of a file)")
    private Integer requests;

    @Option(names = "--seed", paramLabel = "SEED", defaultValue = "42", description = "generator seed (default: 42)")
    private long seed;

    @Option(names = "--layout", paramLabel = "PRESET", defaultValue = "tiny",
            description = "tiny (1x1x8 F16, 32 B/token), llama3-8b (32x8x128 F16), qwen2.5-7b (28x4x128 BF16); "
                    + "default: ${DEFAULT-VALUE}")
    private String layoutPreset;

    @Option(names = "--layers", paramLabel = "L", description = "override the preset's layers")
    private Integer layers;

    @Option(names = "--kv-heads", paramLabel = "H", description = "override the preset's KV heads")
    private Integer kvHeads;

    @Option(names = "--head-dim", paramLabel = "D", description = "override the preset's head dim")
    private Integer headDim;

    @Option(names = "--dtype", paramLabel = "DTYPE", description = "override the preset's dtype: F16, BF16, F32, "
            + "FP8_E4M3, INT8")
    private DType dtype;

    @Option(names = "--block-tokens", paramLabel = "B",
            description = "tokens per block (default: 512 for Mooncake, whose ids are per 512 tokens; a divisor "
                    + "of 512 also works; 64 for the generator and Azure, whose ids are cut at it)")
    private Integer blockTokens;

    @Option(names = "--device-tokens", paramLabel = "TOKENS", defaultValue = "65536",
            description = "device tier capacity in tokens, e.g. 1e6 (default: ${DEFAULT-VALUE}, at most 256 MiB); "
                    + "see --device-bytes")
    private String deviceTokens;

    @Option(names = "--device-bytes", paramLabel = "SIZE", description = "device tier budget in bytes (e.g. 512m); "
            + "overrides --device-tokens")
    private String deviceBytes;

    @Option(names = "--host-tokens", paramLabel = "TOKENS", defaultValue = "131072",
            description = "host tier capacity in tokens; 0 and no disk = single tier (default: ${DEFAULT-VALUE}, at most "
                    + "512 MiB)")
    private String hostTokens;

    @Option(names = "--host-bytes", paramLabel = "SIZE", description = "host tier budget in bytes; overrides "
            + "--host-tokens; 0 and no disk = single-tier LRU store")
    private String hostBytes;

    @Option(names = "--disk-dir", paramLabel = "DIR", description = "disk tier directory, dedicated to this run "
            + "(default: a temporary directory, deleted afterwards)")
    private Path diskDir;

    @Option(names = "--disk-bytes", paramLabel = "SIZE", defaultValue = "64m",
            description = "disk tier budget; 0 = no disk tier (default: ${DEFAULT-VALUE})")
    private String diskBytes;

    @Option(names = "--single-tier", description = "device only: no host, no disk (--host-tokens 0 --disk-bytes 0);"
            + " the manager's block model with an LRU (or --policy) store, as in the Mooncake paper's Figure 9")
    private boolean singleTier;

    @CommandLine.Mixin
    private ManagerOptions manager;

    @Option(names = "--policy", paramLabel = "NAME", defaultValue = "lru",
            description = "eviction policy: lru, lfu, fifo, s3fifo, sieve, priority-lru (default: ${DEFAULT-VALUE})")
    private String policy;

    @Option(names = "--payload", paramLabel = "MODE", defaultValue = "full",
            description = "full: write every block's bytes (derived from its id) and verify every matched block "
                    + "byte for byte; none: zero bytes, no verification, for fast sweeps (default: ${DEFAULT-VALUE})")
    private ReplayConfig.Payload payload;

    @Option(names = "--max-decode-tokens", paramLabel = "N", defaultValue = "-1",
            description = "cap on answer tokens appended per request; -1 = output_length as traced (default)")
    private int maxDecodeTokens;

    @Option(names = "--speed", paramLabel = "X", defaultValue = "0",
            description = "honour timestamps, X times faster than real time; 0 = as fast as possible (default)")
    private double speed;

    @Option(names = "--admission-timeout-ms", paramLabel = "MS", defaultValue = "100",
            description = "how long a block allocation waits for space before its request is rejected "
                    + "(default: ${DEFAULT-VALUE})")
    private double admissionTimeoutMs;

    @Option(names = "--report", paramLabel = "FILE", description = "write the report (or the sweep's reports) as JSON")
    private Path report;

    @Option(names = "--sweep", paramLabel = "TOKENS", split = ",",
            description = "replay once per device capacity in tokens, e.g. 1e4,1e5,1e6,1e7; prints a line per point"
                    + " and writes --sweep-csv and --plot if given; add --single-tier for the device-only curve")
    private List<String> sweep;

    @Option(names = "--sweep-csv", paramLabel = "FILE", description = "write the sweep as CSV (default: none)")
    private Path sweepCsv;

    @Option(names = "--plot", paramLabel = "FILE", description = "write a PNG plot of the sweep (default: none)")
    private Path plot;

    @CommandLine.Mixin
    private MultiNodeOptions multiNode = new MultiNodeOptions();

    @CommandLine.Mixin
    private ObserveOptions observe = new ObserveOptions();

    @Option(names = "--observe-ab", description = "replay in pairs, without and with KV events and metrics "
            + "(--kv-events, --metrics-port, or a loopback publisher and a free port), in alternating order, after "
            + "warm-up pairs that last until the JIT has settled, and print the median of the pairs' on/off throughput "
            + "ratios and of their CPU time per token")
    private boolean observeAb;

    @Option(names = "--ab-pairs", paramLabel = "N", defaultValue = "2",
            description = "with --observe-ab: counted pairs after the warm-up, 1..100 (default: ${DEFAULT-VALUE})")
    private int abPairs;

    @Option(names = "--progress", negatable = true, description = "progress bar on stderr (default: when stderr is "
            + "a terminal)")
    private Boolean progress;

    /** The most device memory the default --device-tokens takes (for large layouts). */
    static final long DEFAULT_DEVICE_CAP = 256L << 20;
    /** The most host memory the default --host-tokens takes (for large layouts). */
    static final long DEFAULT_HOST_CAP = 512L << 20;

    /** Creates the command (picocli instantiates it). */
    public ReplayCommand() {
    }

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        TraceInput.Format f = TraceInput.resolve(trace, format);
        int b = blockTokens != null ? TraceInput.checkBlockTokens(f, blockTokens) : TraceInput.defaultBlockTokens(f);
        KvLayout layout = LayoutPreset.byName(layoutPreset).layout(b, positive("--layers", layers),
                positive("--kv-heads", kvHeads), positive("--head-dim", headDim), dtype);
        ReplayConfig config = config(layout);
        List<Long> sweepTokens = new ArrayList<>();
        for (String cap : sweep == null ? List.<String>of() : sweep) {
            sweepTokens.add(Check.count("--sweep", cap, 1));
        }
        checkOutputs();
        TraceInput input = TraceInput.load(trace, f, b, TraceInput.checkRequests(requests), seed);
        Interrupts.cooperate();
        boolean bar = progress != null ? progress : System.console() != null && System.console().isTerminal();
        if (multiNode.enabled()) {
            return multiNode.run(layout, deviceTokens, input, maxDecodeTokens, report, bar, out);
        }
        if (observeAb) {
            int pairs = (int) Check.between("--ab-pairs", abPairs, 1, 100, "");
            return new ObserveAb(pairs, out).run(o -> replay(config, input, false, "", o), observe::openForComparison);
        }
        List<ReplayReport> reports = new ArrayList<>();
        try (Observation observation = observe.open()) {
            replayAll(config, input, bar, sweepTokens, reports, observation, out);
            observation.eventStats().ifPresent(e -> out.printf(Locale.ROOT, "kv events:     %d queued, %d dropped "
                    + "(the gaps in the sequence numbers), %d delivered in %d batches%n", e.queued(), e.dropped(),
                    e.delivered(), e.batches()));
        }
        if (Interrupts.requested() && sweep != null && !sweep.isEmpty()) {
            return 130;
        }
        if (sweep != null && !sweep.isEmpty()) {
            writeSweep(config, reports, out);
        }
        if (Interrupts.requested()) {
            out.flush();
            return 130;
        }
        if (report != null) {
            ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
            Object value = reports.size() == 1 && (sweep == null || sweep.isEmpty()) ? reports.get(0)
                    : Map.of("sweep", reports);
            json.writeValue(report.toFile(), value);
            out.println("wrote " + report);
        }
        out.flush();
        return reports.stream().anyMatch(ReplayCommand::failed) ? 1 : 0;
    }

    /**
     * The replay, or each point of the sweep (stopping at an interrupt), observed as the options ask.
     *
     * @param config      the configuration
     * @param input       the requests
     * @param bar         whether to draw a progress bar
     * @param sweepTokens the sweep's device capacities, empty for one replay
     * @param reports     receives each report
     * @param observation what the managers report to
     * @param out         the summary's writer
     */
    private void replayAll(ReplayConfig config, TraceInput input, boolean bar, List<Long> sweepTokens,
            List<ReplayReport> reports, Observation observation, PrintWriter out) {
        int b = config.layout().blockSizeTokens();
        if (sweep == null || sweep.isEmpty()) {
            ReplayReport r = replay(config, input, bar, "", observation);
            reports.add(r);
            if (Interrupts.requested()) {
                out.printf(Locale.ROOT, "interrupted after %d of %d requests: partial summary, no files written%n",
                        r.requests(), input.requests().size());
            }
            out.print(r.summary());
        } else {
            for (long tokens : sweepTokens) {
                long blocks = Math.max(config.recentBlocks() + 1L, (tokens + b - 1) / b);
                ReplayConfig point = config.withDeviceBytes(blocks * config.layout().bytesPerBlock());
                ReplayReport r = replay(point, input, bar, String.format(Locale.ROOT, "%.3g tokens ", (double) tokens),
                        observation);
                reports.add(r);
                out.printf(Locale.ROOT, "device %10d tokens: hit rate %.4f (ceiling %.4f), %d rejected, %.1f s%n",
                        r.setup().deviceTokens(), r.hitRate(), r.ceilingHitRate(), r.rejectedRequests(),
                        r.wallSeconds());
                out.flush();
                if (Interrupts.requested()) {
                    out.printf(Locale.ROOT, "interrupted at %d of %d requests of this point: partial sweep, no "
                            + "files written%n", r.requests(), input.requests().size());
                    out.flush();
                    return;
                }
            }
        }
    }

    /**
     * The sweep's note and files.
     *
     * @param config  the configuration
     * @param reports the sweep's reports
     * @param out     the writer
     * @throws IOException if a file cannot be written
     */
    private void writeSweep(ReplayConfig config, List<ReplayReport> reports, PrintWriter out) throws IOException {
        if (config.tiered() && reports.stream().allMatch(r -> r.hitRate() >= r.ceilingHitRate() - 0.005)) {
            out.println("note: every point is at the ceiling: the host and disk tiers below the device hold the "
                    + "working set whatever the device's size; --single-tier sweeps the device alone");
        }
        if (sweepCsv != null) {
            Sweep.writeCsv(sweepCsv, reports);
            out.println("wrote " + sweepCsv);
        }
        if (plot != null) {
            Sweep.writePlot(plot, reports);
            out.println("wrote " + plot);
        }
    }

    /**
     * Whether a replay failed: a block read back differed from what was written, an invariant
     * broke, or more matched blocks were lost below than damaged disk records were found (a lost
     * block nothing explains).
     *
     * @param r the report
     * @return true for exit status 1
     */
    static boolean failed(ReplayReport r) {
        return r.events().verifyFailures() > 0 || !r.invariantViolations().isEmpty()
                || r.hits().lost() > r.events().corruptRecords();
    }

    /**
     * Checks an optional positive override: absent is 0 (keep the preset's), present must be {@code >= 1}.
     */
    private static int positive(String option, Integer value) {
        return value == null ? 0 : (int) Check.atLeast(option, value, 1);
    }

    /**
     * Refuses an option given where it does nothing, naming it and what it needs, as a
     * {@code --sweep-csv} without {@code --sweep} is refused: a run that ignores what was asked
     * for measures something else than its user thinks.
     */
    private void refuseOptionsWithoutEffect(CommandLine.ParseResult parsed) {
        if (parsed.hasMatchedOption("--ab-pairs") && !observeAb) {
            throw new IllegalArgumentException("--ab-pairs " + abPairs + " (expected with --observe-ab)");
        }
        if (observeAb && sweep != null && !sweep.isEmpty()) {
            throw new IllegalArgumentException("--sweep with --observe-ab (expected one of them: the A/B pairs replay "
                    + "the one configuration)");
        }
        if (multiNode.enabled()) { // nodes are single-tier LRU caches of --node-device-tokens that write no bytes
            for (String o : List.of("--kv-events", "--metrics-port", "--observe-ab", "--device-bytes", "--host-tokens",
                    "--host-bytes", "--disk-dir", "--disk-bytes", "--single-tier", "--policy", "--payload", "--speed",
                    "--admission-timeout-ms", "--sweep", "--compression", "--movers", "--recent-blocks")) {
                boolean agrees = o.equals("--payload") && payload == ReplayConfig.Payload.NONE; // what the nodes do
                if (parsed.hasMatchedOption(o) && !agrees) {
                    throw new IllegalArgumentException(o + " with --nodes (expected without: the multi-node replay's "
                            + "nodes are device-only LRU caches of --node-device-tokens that write no bytes, not "
                            + "observed)");
                }
            }
        }
        if (singleTier) {
            for (String o : List.of("--host-tokens", "--host-bytes", "--disk-bytes", "--disk-dir", "--compression")) {
                if (parsed.hasMatchedOption(o)) {
                    throw new IllegalArgumentException(o + " with --single-tier (expected without: a single-tier "
                            + "run has no host or disk tier)");
                }
            }
        }
    }

    /** Checks that every file this run will write can be written, before the run starts. */
    private void checkOutputs() {
        if (report != null) {
            Check.outputFile("--report", report);
        }
        if (diskDir != null) {
            Check.outputDirectory("--disk-dir", diskDir);
        }
        if ((sweepCsv != null || plot != null) && (sweep == null || sweep.isEmpty())) {
            throw new IllegalArgumentException((sweepCsv != null ? "--sweep-csv " + sweepCsv : "--plot " + plot)
                    + " (expected with --sweep)");
        }
        if (sweepCsv != null) {
            Check.outputFile("--sweep-csv", sweepCsv);
        }
        if (plot != null) {
            Check.outputFile("--plot", plot);
        }
    }

    private ReplayReport replay(ReplayConfig config, TraceInput input, boolean bar, String label,
            Observation observation) {
        try (Progress p = new Progress(System.err, input.requests().size(), bar, label)) {
            return new Replayer(config, observation).run(input.requests(), input.traceBlockTokens(), input.source(),
                    input.format(), p);
        }
    }

    /**
     * Builds the configuration from the options.
     *
     * @param layout the layout
     * @return the configuration
     */
    ReplayConfig config(KvLayout layout) {
        long perToken = layout.bytesPerToken();
        long block = layout.bytesPerBlock();
        CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        long dev = deviceBytes != null ? Check.bytes("--device-bytes", deviceBytes)
                : roundUp(Check.count("--device-tokens", deviceTokens, 1) * perToken, block);
        long host = hostBytes != null ? Check.bytes("--host-bytes", hostBytes)
                : roundUp(Check.count("--host-tokens", hostTokens, 0) * perToken, block);
        // Defaults in tokens are sized for the tiny layout; a large preset keeps them within memory.
        if (deviceBytes == null && !parsed.hasMatchedOption("--device-tokens")) {
            dev = Math.min(dev, Math.max(DEFAULT_DEVICE_CAP, (manager.recentBlocks() + 2L) * block) / block * block);
        }
        if (hostBytes == null && !parsed.hasMatchedOption("--host-tokens")) {
            host = Math.min(host, Math.max(DEFAULT_HOST_CAP, block) / block * block);
        }
        long disk = Check.bytes("--disk-bytes", diskBytes);
        manager.check();
        observe.check();
        refuseOptionsWithoutEffect(parsed);
        Check.atLeast("--max-decode-tokens", maxDecodeTokens, -1);
        Check.between("--speed", speed, 0, Double.MAX_VALUE);
        Check.between("--admission-timeout-ms", admissionTimeoutMs, 0, Double.MAX_VALUE);
        io.tierkv.remote.RemoteOptions remote = multiNode.belowManager(layout.blockSizeTokens());
        if (remote != null && (singleTier || host == 0 && disk == 0)) {
            throw new IllegalArgumentException("--remote " + remote.url() + " with " + (singleTier ? "--single-tier"
                    : "no host or disk tier (host 0 bytes, --disk-bytes 0)") + " (expected a host or disk tier: the "
                    + "store lies below the lowest local tier)");
        }
        if (singleTier) {
            host = 0;
            disk = 0;
        }
        try {
            return new ReplayConfig(layout, dev, host, diskDir, disk, manager.compression(),
                    policy.toLowerCase(Locale.ROOT), manager.recentBlocks(), manager.movers(), payload,
                    maxDecodeTokens, speed, Math.round(admissionTimeoutMs * 1e6), remote);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(asTyped(e.getMessage())); // the option, not the field: no cause
        }
    }

    /**
     * Rewrites a {@link ReplayConfig} message, which names the record's field ({@code deviceBytes: 96
     * (expected ...)}), to name the option as typed and its value ({@code --device-tokens 3 (96 bytes;
     * expected ...)}).
     */
    private String asTyped(String message) {
        int colon = message.indexOf(": ");
        if (colon < 0) {
            return message;
        }
        String field = message.substring(0, colon);
        String rest = message.substring(colon + 2).replace("recentBlocks", "--recent-blocks");
        String typed = switch (field) {
            case "deviceBytes" -> deviceBytes != null ? "--device-bytes " + deviceBytes
                    : "--device-tokens " + deviceTokens;
            case "hostBytes" -> hostBytes != null ? "--host-bytes " + hostBytes : "--host-tokens " + hostTokens;
            case "diskBytes" -> "--disk-bytes " + diskBytes;
            case "policy" -> "--policy";
            case "recentBlocks" -> "--recent-blocks";
            case "movers" -> "--movers";
            case "maxDecodeTokens" -> "--max-decode-tokens";
            case "speed" -> "--speed";
            case "admissionTimeoutNanos" -> "--admission-timeout-ms " + admissionTimeoutMs;
            default -> null;
        };
        if (typed == null) {
            return message;
        }
        boolean withValue = typed.indexOf(' ') > 0;
        return withValue ? typed + " (" + rest.replaceFirst("^(\\S+) \\(", "$1 bytes; ") : typed + " " + rest;
    }

    private static long roundUp(long v, long unit) {
        return (v + unit - 1) / unit * unit;
    }
}
