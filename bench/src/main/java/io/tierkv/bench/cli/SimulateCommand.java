package io.tierkv.bench.cli;

import io.tierkv.bench.sim.PolicySimulator;
import io.tierkv.bench.sim.SimulationResult;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tierkv simulate}: the metadata-only eviction-policy simulator
 * ({@link PolicySimulator}) over a trace, with Belady's MIN as the baseline. Capacities are in
 * tokens and converted to blocks of the trace's block size; hit rates are per block lookup (see
 * {@link PolicySimulator}), not token-weighted as in {@code replay}.
 */
@Command(name = "simulate", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Simulate eviction policies over a trace's prompt blocks (no bytes, no manager), "
                + "with Belady's MIN as the optimal baseline.")
public final class SimulateCommand implements Callable<Integer> {

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Option(names = "--trace", paramLabel = "FILE", description = "Mooncake .jsonl or Azure .csv trace; absent: "
            + "the built-in generator")
    private Path trace;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "auto",
            description = "auto, mooncake, azure or generator (default: ${DEFAULT-VALUE})")
    private TraceInput.Format format;

    @Option(names = "--requests", paramLabel = "N", description = "only the first N requests, N >= 1")
    private Integer requests;

    @Option(names = "--seed", paramLabel = "SEED", defaultValue = "42", description = "generator and random-policy "
            + "seed (default: ${DEFAULT-VALUE})")
    private long seed;

    @Option(names = "--block-tokens", paramLabel = "B",
            description = "block size for generator and Azure ids (default 64; Mooncake is always 512)")
    private Integer blockTokens;

    @Option(names = "--policies", paramLabel = "NAMES", split = ",", defaultValue = "lru,lfu,fifo,s3fifo,sieve",
            description = "policies to compare; belady is always added (default: ${DEFAULT-VALUE}; also random, "
                    + "priority-lru)")
    private List<String> policies;

    @Option(names = "--capacities", paramLabel = "TOKENS", split = ",", defaultValue = "1e4,1e5,1e6,3e6,1e7,5e7",
            description = "cache capacities in tokens (default: ${DEFAULT-VALUE})")
    private List<String> capacities;

    /** Creates the command (picocli instantiates it). */
    public SimulateCommand() {
    }

    @Override
    public Integer call() {
        TraceInput.Format f = TraceInput.resolve(trace, format);
        int b = blockTokens != null ? TraceInput.checkBlockTokens(f, blockTokens) : TraceInput.defaultBlockTokens(f);
        long[] tokens = new long[capacities.size()];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = Check.count("--capacities", capacities.get(i), 1);
        }
        TraceInput input = TraceInput.load(trace, f, b, TraceInput.checkRequests(requests), seed);
        long[] blocks = new long[tokens.length];
        int bt = input.traceBlockTokens();
        for (int i = 0; i < blocks.length; i++) { // whole blocks; two capacities of one size would print one row
            blocks[i] = tokens[i] / bt;
            if (blocks[i] < 1) {
                throw new IllegalArgumentException("--capacities " + capacities.get(i) + " (expected >= " + bt
                        + " tokens: one block of this trace)");
            }
            for (int j = 0; j < i; j++) {
                if (blocks[j] == blocks[i]) {
                    throw new IllegalArgumentException("--capacities " + capacities.get(j) + "," + capacities.get(i)
                            + ": both are " + blocks[i] + " blocks of " + bt + " tokens (expected capacities of "
                            + "different whole blocks)");
                }
            }
        }
        SimulationResult r;
        try {
            r = PolicySimulator.run(input.requests(), policies, blocks, seed);
        } catch (IllegalArgumentException e) { // name the option as typed, not the simulator's field
            if (e.getMessage() == null || !e.getMessage().startsWith("policy: ")) {
                throw e;
            }
            throw new IllegalArgumentException("--policies " + String.join(",", policies) + ": "
                    + e.getMessage().substring("policy: ".length()));
        }
        var out = spec.commandLine().getOut();
        out.println(input.source() + ", blocks of " + input.traceBlockTokens() + " tokens"); // the table gives the counts
        out.print(r.toTable());
        out.flush();
        return 0;
    }
}
