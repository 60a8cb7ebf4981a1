package io.tierkv.bench.cli;

import io.tierkv.bench.trace.TraceRequest;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.CacheOptions;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.pool.SlabMemory;
import io.tierkv.remote.RemoteOptions;
import io.tierkv.remote.RemoteStats;
import io.tierkv.remote.RemoteStore;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;

/**
 * The multi-node replay (issue 14; the Mooncake paper's Figure 10, local caches against a global
 * pool): N nodes in one JVM, each with its own single-tier device cache of {@code
 * nodeDeviceTokens}, sharing one remote store, requests routed to nodes. Two fleets replay the
 * same requests in the same run: one with local caches only, one whose nodes also share the
 * remote store, so both hit rates come from one pass over the trace.
 *
 * <h2>One request on a node</h2>
 * <ol>
 *   <li>The prompt's tokens are synthesized from its trace block ids, as {@link Replayer} does,
 *       and its chain of block hashes and identities computed ({@link PromptChain}).
 *   <li>Local hit: {@code Sequence.matchPrefix} on the node's cache.
 *   <li>Shared hit (the sharing fleet): the blocks after the local match are looked up in the
 *       store along the chain (one pipelined {@code EXISTS} per block, stopping at the first
 *       miss), read with identity and checksum verified ({@link RemoteStore#getAll}), and
 *       appended whole into the sequence ({@link Sequence#appendBlock}), as an offloading
 *       connector injects fetched KV: they seal at once under the same hashes.
 *   <li>Prefill appends the rest of the prompt in whole blocks; decode appends the answer.
 *   <li>Write-through (the sharing fleet): every prompt block this node computed is written to
 *       the store once (write-once {@code SET NX}; a block already there is not sent again).
 * </ol>
 * A node's cache evicts by LRU; the store by its own eviction ({@code server} or the owned
 * {@code lru} of {@code remoteCapacityTokens}). The token hit rate counts prompt tokens served
 * from a cache (local) or from a cache or the store (shared), over all prompt tokens.
 *
 * <h2>Routing</h2>
 * {@code ROUND_ROBIN} sends request i to node i mod N. {@code PREFIX} sends it to the node whose
 * cache holds the longest leading run of its blocks (read through the cache's index, which does
 * not touch its LRU order), ties to the node with the fewest prompt tokens so far; each fleet
 * routes by its own caches.
 *
 * <p>Not thread-safe; runs on the calling thread.
 */
final class MultiNodeReplay {

    /** How requests are sent to nodes. */
    enum Route {
        /** Request i to node i mod N. */
        ROUND_ROBIN,
        /** To the node with the longest locally cached prefix; ties to the fewest prompt tokens so far. */
        PREFIX
    }

    /**
     * One run's result.
     *
     * @param nodes              N
     * @param route              the routing
     * @param requests           requests replayed
     * @param promptTokens       prompt tokens over all requests
     * @param localHitRate       token hit rate of the fleet with local caches only
     * @param sharedHitRate      token hit rate of the fleet that shares the store (its local and
     *                           store hits)
     * @param sharedLocalHitRate of the sharing fleet's hits, the part its local caches served
     * @param ceilingHitRate     an infinite cache's token hit rate on the same requests
     * @param localNodeHitRates  per node, the local-only fleet's hit rate
     * @param sharedNodeHitRates per node, the sharing fleet's hit rate
     * @param remote             the store's counters at the end
     * @param rejectedRequests   requests a node refused for capacity (counted, not replayed further)
     * @param wallSeconds        wall time of the run
     */
    record Result(int nodes, String route, long requests, long promptTokens, double localHitRate,
            double sharedHitRate, double sharedLocalHitRate, double ceilingHitRate, double[] localNodeHitRates,
            double[] sharedNodeHitRates, RemoteStats remote, long rejectedRequests, double wallSeconds) {
    }

    private final KvLayout layout;
    private final int bm;
    private final long nodeDeviceBlocks;
    private final Route route;
    private final RemoteOptions remoteOptions;
    private final int maxDecodeTokens;

    /**
     * Creates the replay.
     *
     * @param layout           block layout of every node (its block size is the cache's B)
     * @param nodeDeviceTokens device cache per node, in tokens
     * @param route            the routing
     * @param remoteOptions    the shared store
     * @param maxDecodeTokens  answer tokens appended per request at most, -1 for the trace's
     */
    MultiNodeReplay(KvLayout layout, long nodeDeviceTokens, Route route, RemoteOptions remoteOptions,
            int maxDecodeTokens) {
        this.layout = layout;
        this.bm = layout.blockSizeTokens();
        this.nodeDeviceBlocks = Math.max(1, nodeDeviceTokens / bm);
        this.route = route;
        this.remoteOptions = remoteOptions;
        this.maxDecodeTokens = maxDecodeTokens;
    }

    /**
     * Replays the requests through both fleets.
     *
     * @param requests         in arrival order
     * @param traceBlockTokens the trace's block size, a multiple of B
     * @param nodes            N, {@code >= 1}
     * @param progress         told of each request
     * @return the result
     */
    Result run(List<TraceRequest> requests, int traceBlockTokens, int nodes, Progress progress) {
        long start = System.nanoTime();
        try (Fleet local = new Fleet(nodes, null); RemoteStore store = RemoteStore.open(remoteOptions,
                layout.fingerprint()); Fleet shared = new Fleet(nodes, store);
                PromptChain chain = new PromptChain(bm)) {
            int[] buf = new int[traceBlockTokens * 4];
            java.util.Set<Long> seen = new java.util.HashSet<>();
            long prompt = 0;
            long ceiling = 0;
            long n = 0;
            for (TraceRequest r : requests) {
                if (Interrupts.requested()) {
                    break;
                }
                int k = r.blockCount();
                int tokens = k * traceBlockTokens;
                if (buf.length < tokens) {
                    buf = new int[Math.max(tokens, buf.length * 2)];
                }
                int run = BlockContent.prompt(r, buf, traceBlockTokens, seen);
                int input = Math.min(r.inputLength(), tokens);
                prompt += input;
                ceiling += Math.min((long) run * traceBlockTokens, input);
                int full = input / bm;
                chain.compute(buf, full);
                int answer = maxDecodeTokens < 0 ? r.outputLength() : Math.min(r.outputLength(), maxDecodeTokens);
                local.request(n, buf, input, chain, answer);
                shared.request(n, buf, input, chain, answer);
                n++;
                progress.update(n, rate(shared.hits(), prompt));
            }
            double wall = (System.nanoTime() - start) / 1e9;
            return new Result(nodes, route.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'), n, prompt,
                    rate(local.hits(), prompt), rate(shared.hits(), prompt), rate(shared.localHits(), prompt),
                    rate(ceiling, prompt), local.nodeRates(), shared.nodeRates(), store.stats(),
                    local.rejected + shared.rejected, wall);
        }
    }

    private static double rate(long hits, long total) {
        return total == 0 ? 0 : (double) hits / total;
    }

    /** N nodes, with or without the shared store. */
    private final class Fleet implements AutoCloseable {
        private final Node[] nodes;
        private final RemoteStore store;
        private long rejected;

        Fleet(int count, RemoteStore store) {
            this.store = store;
            this.nodes = new Node[count];
            for (int i = 0; i < count; i++) {
                nodes[i] = new Node(Math.toIntExact(nodeDeviceBlocks));
            }
        }

        void request(long n, int[] buf, int input, PromptChain chain, int answer) {
            Node node = nodes[pick(n, chain)];
            node.promptTokens += input;
            try {
                node.serve(buf, input, chain, answer, store, n);
            } catch (CapacityExhaustedException e) {
                rejected++;
            }
        }

        private int pick(long n, PromptChain chain) {
            if (route == Route.ROUND_ROBIN) {
                return (int) (n % nodes.length);
            }
            int best = 0;
            int bestRun = -1;
            for (int i = 0; i < nodes.length; i++) {
                int run = nodes[i].cachedRun(chain);
                if (run > bestRun || run == bestRun && nodes[i].promptTokens < nodes[best].promptTokens) {
                    best = i;
                    bestRun = run;
                }
            }
            return best;
        }

        long hits() {
            long h = 0;
            for (Node node : nodes) {
                h += node.localHitTokens + node.remoteHitTokens;
            }
            return h;
        }

        long localHits() {
            long h = 0;
            for (Node node : nodes) {
                h += node.localHitTokens;
            }
            return h;
        }

        double[] nodeRates() {
            double[] out = new double[nodes.length];
            for (int i = 0; i < nodes.length; i++) {
                out[i] = rate(nodes[i].localHitTokens + nodes[i].remoteHitTokens, nodes[i].promptTokens);
            }
            return out;
        }

        @Override
        public void close() {
            for (Node node : nodes) {
                node.close();
            }
        }
    }

    /** One node: a single-tier device cache and its counters. */
    private final class Node implements AutoCloseable {
        private final SlabMemory memory;
        private final PagedKvCache cache;
        private final Arena arena = Arena.ofShared(); // the store encodes and decodes on its I/O threads
        private final MemorySegment zero;
        /** One position's K (or V) of zeros, for the tokens appended one at a time. */
        private final MemorySegment zeroToken;
        private MemorySegment[] fetched = new MemorySegment[0];
        long promptTokens;
        long localHitTokens;
        long remoteHitTokens;

        Node(int deviceBlocks) {
            this.memory = new SlabMemory(deviceBlocks, layout.bytesPerBlock());
            this.cache = new PagedKvCache(CacheOptions.of(layout, deviceBlocks).withPolicy("lru")
                    .withRecentDeviceBlocks(0).withAdmissionTimeoutNanos(0), memory, null);
            this.zero = arena.allocate(layout.bytesPerBlock(), 64);
            this.zeroToken = zero.asSlice(0, layout.tokenVectorBytes());
        }

        /** Leading blocks of the chain this node's index holds (no LRU touch). */
        int cachedRun(PromptChain chain) {
            int run = 0;
            while (run < chain.blocks()
                    && cache.diagnostics().indexedBlock(chain.hashHi()[run], chain.hashLo()[run]) >= 0) {
                run++;
            }
            return run;
        }

        void serve(int[] buf, int input, PromptChain chain, int answer, RemoteStore store, long n) {
            try (Sequence seq = cache.openSequence(SequenceOptions.defaults())) {
                int matched = input == 0 ? 0 : seq.matchPrefix(buf, input);
                localHitTokens += matched;
                int from = matched / bm;
                int full = chain.blocks();
                if (store != null && from < full) {
                    int found = store.lookup(Arrays.copyOfRange(chain.hashHi(), from, full),
                            Arrays.copyOfRange(chain.hashLo(), from, full), full - from);
                    found = found == 0 ? 0 : fetch(store, chain, from, found);
                    for (int i = 0; i < found; i++) {
                        seq.appendBlock(buf, (from + i) * bm, fetched[i]);
                    }
                    remoteHitTokens += (long) found * bm;
                    from += found;
                }
                int computed = from;
                for (int b = from; b < full; b++) {
                    seq.appendBlock(buf, b * bm, zero);
                }
                for (int p = full * bm; p < input; p++) {
                    appendZero(seq, buf[p]);
                }
                for (int j = 0; j < answer; j++) {
                    appendZero(seq, BlockContent.decodeToken(n, j));
                }
                if (store != null && computed < full) { // write-through of what this node computed, pipelined
                    int count = full - computed;
                    for (int i = 0; i < count; i++) {
                        seq.readBlock(computed + i, fetchBuffer(i));
                    }
                    store.putAll(Arrays.copyOfRange(chain.hashHi(), computed, full),
                            Arrays.copyOfRange(chain.hashLo(), computed, full),
                            Arrays.copyOfRange(chain.identities(), computed, full), fetched, count);
                }
            }
        }

        /** Reads {@code count} leading blocks of the chain from {@code from} on; returns the verified leading run. */
        private int fetch(RemoteStore store, PromptChain chain, int from, int count) {
            for (int i = 0; i < count; i++) {
                fetchBuffer(i);
            }
            MemorySegment[] ids = Arrays.copyOfRange(chain.identities(), from, from + count);
            return store.getAll(Arrays.copyOfRange(chain.hashHi(), from, from + count),
                    Arrays.copyOfRange(chain.hashLo(), from, from + count), ids, fetched, count);
        }

        private MemorySegment fetchBuffer(int i) {
            if (i >= fetched.length) {
                MemorySegment[] grown = Arrays.copyOf(fetched, Math.max(i + 1, fetched.length * 2));
                for (int j = fetched.length; j < grown.length; j++) {
                    grown[j] = arena.allocate(layout.bytesPerBlock(), 64);
                }
                fetched = grown;
            }
            return fetched[i];
        }

        private void appendZero(Sequence seq, int token) {
            int pos = seq.appendToken(token);
            for (int l = 0; l < layout.layers(); l++) {
                seq.write(l, pos, zeroToken, zeroToken);
            }
        }

        @Override
        public void close() {
            cache.close();
            memory.close();
            arena.close();
        }
    }
}
