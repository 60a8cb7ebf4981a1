package io.tierkv.bench.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.tierkv.core.KvLayout;
import io.tierkv.remote.RemoteEviction;
import io.tierkv.remote.RemoteOptions;
import io.tierkv.remote.RemoteUnavailableException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * {@code tierkv replay}'s multi-node options ({@link MultiNodeReplay}): with {@code --nodes N}
 * the replay runs N single-tier device caches sharing one Valkey/Redis store instead of one
 * tiered manager, and prints local-only against shared token hit rates. Not thread-safe
 * (picocli fills it).
 */
final class MultiNodeOptions {

    private static final String DEFAULT_ROUTE = "round-robin";
    private static final String DEFAULT_EVICTION = "server";

    @Option(names = "--nodes", paramLabel = "N",
            description = "multi-node run: N nodes (single-tier device caches) sharing the --remote store; prints "
                    + "hit rates with local caches only and with the shared store, from one pass (default: off)")
    Integer nodes;

    @Option(names = "--remote", paramLabel = "URL",
            description = "the shared store: redis://HOST:PORT or redis-cluster://HOST:PORT[,HOST:PORT...] "
                    + "(required with --nodes); without --nodes, a remote tier below the one manager's lowest "
                    + "local tier (default: none)")
    String remote;

    @Option(names = "--node-device-tokens", paramLabel = "T",
            description = "each node's device cache in tokens, e.g. 3e6 (default: --device-tokens)")
    String nodeDeviceTokens;

    @Option(names = "--route", paramLabel = "ROUTE", defaultValue = DEFAULT_ROUTE,
            description = "round-robin (request i to node i mod N) or prefix (the node with the longest cached "
                    + "prefix, ties to the fewest prompt tokens so far) (default: ${DEFAULT-VALUE})")
    String route;

    @Option(names = "--remote-eviction", paramLabel = "MODE", defaultValue = DEFAULT_EVICTION,
            description = "server (the server's maxmemory policy) or lru (an exact LRU index the store owns, of "
                    + "--remote-capacity-tokens) (default: ${DEFAULT-VALUE})")
    String eviction;

    @Option(names = "--remote-capacity-tokens", paramLabel = "C",
            description = "the owned LRU's capacity in tokens, e.g. 3e7 (required with --remote-eviction lru)")
    String capacityTokens;

    /**
     * The remote tier of a one-manager replay: {@code --remote} without {@code --nodes}, in a
     * namespace of its own, with its eviction ({@code --remote-eviction}, {@code
     * --remote-capacity-tokens}) as in a multi-node run.
     *
     * @param blockSizeTokens B, the unit of {@code --remote-capacity-tokens}
     * @return the store's options, or null without {@code --remote} or with {@code --nodes}
     * @throws IllegalArgumentException naming the option, for a bad URL or eviction, a store option
     *     without {@code --remote}, or a multi-node option ({@code --node-device-tokens}, a {@code
     *     --route} other than the default) given without {@code --nodes}
     */
    io.tierkv.remote.RemoteOptions belowManager(int blockSizeTokens) {
        if (enabled()) {
            return null;
        }
        if (nodeDeviceTokens != null || !route.equals(DEFAULT_ROUTE)) {
            throw new IllegalArgumentException((nodeDeviceTokens != null ? "--node-device-tokens " + nodeDeviceTokens
                    : "--route " + route) + " without --nodes (expected --nodes N)");
        }
        if (remote == null && (capacityTokens != null || !eviction.equals(DEFAULT_EVICTION))) {
            throw new IllegalArgumentException((capacityTokens != null ? "--remote-capacity-tokens " + capacityTokens
                    : "--remote-eviction " + eviction) + " without --remote (expected --remote URL)");
        }
        return remote == null ? null : withEviction(storeOptions(), blockSizeTokens);
    }

    /**
     * {@return the options with {@code --remote-eviction} and {@code --remote-capacity-tokens} applied}
     *
     * @throws IllegalArgumentException naming the option, its value and what was expected
     */
    private RemoteOptions withEviction(RemoteOptions options, int blockSizeTokens) {
        switch (eviction.toLowerCase(Locale.ROOT)) {
            case "server" -> {
                if (capacityTokens != null) {
                    throw new IllegalArgumentException("--remote-capacity-tokens " + capacityTokens
                            + " with --remote-eviction server (expected --remote-eviction lru)");
                }
                return options;
            }
            case "lru" -> {
                if (capacityTokens == null) {
                    throw new IllegalArgumentException("--remote-eviction lru without --remote-capacity-tokens "
                            + "(expected the owned LRU's capacity in tokens)");
                }
                long c = Check.count("--remote-capacity-tokens", capacityTokens, blockSizeTokens);
                return options.withEviction(RemoteEviction.LRU).withLruCapacityBlocks(c / blockSizeTokens);
            }
            default -> throw new IllegalArgumentException("--remote-eviction '" + eviction
                    + "' (expected server or lru)");
        }
    }

    /** {@return the store's options from --remote, in a namespace of this run's own} */
    private RemoteOptions storeOptions() {
        try {
            return RemoteOptions.of(remote)
                    .withNamespace("replay-" + Long.toHexString(System.nanoTime() ^ ProcessHandle.current().pid()));
        } catch (IllegalArgumentException e) { // names the record's field: name the option as typed
            throw new IllegalArgumentException(e.getMessage().replaceFirst("^url: ", "--remote "));
        }
    }

    /** {@return whether a multi-node run was asked for} */
    boolean enabled() {
        return nodes != null;
    }

    /**
     * Runs the multi-node replay and prints its table; writes {@code report} as JSON if given.
     *
     * @param layout              the nodes' layout
     * @param defaultDeviceTokens {@code --device-tokens}, the default per node
     * @param input               the requests
     * @param maxDecodeTokens     {@code --max-decode-tokens}
     * @param report              where to write the JSON report, or null
     * @param bar                 whether to draw a progress bar
     * @param out                 where to print
     * @return the exit status
     * @throws IllegalArgumentException naming the option, its value and the bound, for bad options
     * @throws IOException              if the report cannot be written
     */
    int run(KvLayout layout, String defaultDeviceTokens, TraceInput input, int maxDecodeTokens, Path report,
            boolean bar, PrintWriter out) throws IOException {
        int n = (int) Check.between("--nodes", nodes, 1, 256, "");
        if (remote == null) {
            throw new IllegalArgumentException("--nodes " + nodes + " without --remote (expected --remote URL of the "
                    + "shared store)");
        }
        long tokens = Check.count("--node-device-tokens",
                nodeDeviceTokens != null ? nodeDeviceTokens : defaultDeviceTokens, layout.blockSizeTokens());
        MultiNodeReplay.Route r = switch (route.toLowerCase(Locale.ROOT)) {
            case "round-robin" -> MultiNodeReplay.Route.ROUND_ROBIN;
            case "prefix" -> MultiNodeReplay.Route.PREFIX;
            default -> throw new IllegalArgumentException("--route '" + route + "' (expected round-robin or prefix)");
        };
        RemoteOptions options = withEviction(storeOptions(), layout.blockSizeTokens());
        if (report != null) {
            Check.outputFile("--report", report);
        }
        MultiNodeReplay.Result res;
        try (Progress p = new Progress(System.err, input.requests().size(), bar, n + " nodes ")) {
            res = new MultiNodeReplay(layout, tokens, r, options, maxDecodeTokens).run(input.requests(),
                    input.traceBlockTokens(), n, p);
        } catch (RemoteUnavailableException e) { // cannot connect at open: one line naming the option, status 2
            String why = "--remote " + remote + ": the store is unavailable ("
                    + e.reason() + ")";
            throw new java.io.UncheckedIOException(why, new IOException(why, e));
        }
        print(res, tokens, out);
        if (report != null) {
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(report.toFile(), res);
            out.println("wrote " + report);
        }
        out.flush();
        return Interrupts.requested() ? 130 : 0;
    }

    private void print(MultiNodeReplay.Result res, long tokens, PrintWriter out) {
        out.printf(Locale.ROOT, "%d nodes of %.3g device tokens, route %s, shared store %s (eviction %s%s)%n",
                res.nodes(), (double) tokens, res.route(), remote, eviction.toLowerCase(Locale.ROOT),
                capacityTokens == null ? "" : ", " + capacityTokens + " tokens");
        out.printf(Locale.ROOT, "%-6s %12s %12s%n", "node", "local only", "shared");
        for (int i = 0; i < res.nodes(); i++) {
            out.printf(Locale.ROOT, "%-6d %12.4f %12.4f%n", i, res.localNodeHitRates()[i], res.sharedNodeHitRates()[i]);
        }
        out.printf(Locale.ROOT, "%-6s %12.4f %12.4f   (infinite-cache ceiling %.4f; shared = %.4f local + %.4f "
                + "from the store)%n", "total", res.localHitRate(), res.sharedHitRate(), res.ceilingHitRate(),
                res.sharedLocalHitRate(), res.sharedHitRate() - res.sharedLocalHitRate());
        var s = res.remote();
        out.printf(Locale.ROOT, "store: %d lookups, %d gets, %d hits, %d misses, %d puts (%d present), %.1f MiB "
                + "written, %.1f MiB read, %d timeouts, %d errors, breaker %s (%d trips), %d LRU evictions; %d "
                + "requests rejected; %.1f s%n", s.lookups(), s.gets(), s.hits(), s.misses(), s.puts(), s.putsPresent(),
                s.bytesWritten() / 1048576.0, s.bytesRead() / 1048576.0, s.timeouts(), s.errors(), s.breakerState(),
                s.breakerTrips(), s.lruEvicted(), res.rejectedRequests(), res.wallSeconds());
    }
}
