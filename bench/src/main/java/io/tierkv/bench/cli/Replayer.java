package io.tierkv.bench.cli;

import io.tierkv.observe.Observation;
import io.tierkv.bench.trace.TraceRequest;
import io.tierkv.core.KvLayout;
import io.tierkv.core.budget.MachineMemory;
import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.CacheOptions;
import io.tierkv.core.cache.CacheStats;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.error.TransferTimeoutException;
import io.tierkv.core.pool.SlabMemory;
import io.tierkv.core.prefix.HashAlgorithm;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.KvBlockManagerBuilder;
import io.tierkv.tiers.TierStats;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.store.DiskFormat;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;

/**
 * Replays trace requests, in arrival order, through a real KV block manager (see
 * {@link ReplayConfig} for the tiers), one request at a time:
 *
 * <ol>
 *   <li>The prompt's token ids are synthesized from the trace's block ids ({@link BlockContent}):
 *       every trace block, the last partial one included, becomes a full block of tokens.
 *   <li>{@code Sequence.matchPrefix} finds the cached leading blocks; each is then leased (and so
 *       promoted to the device if it was below) and, with payload {@code full}, every byte checked.
 *       If a matched block turns out lost below (its only copy, a disk record, found damaged),
 *       the manager unindexes it and the request starts over with a new sequence, as
 *       a runtime would (at most {@value #MAX_MATCH_ATTEMPTS} attempts).
 *   <li>Prefill appends and writes every remaining prompt token (all layers), sealing the blocks.
 *   <li>Decode appends {@code output_length} answer tokens (capped by {@code maxDecodeTokens}).
 *   <li>The sequence closes; its sealed blocks stay cached until the policy evicts them. A
 *       manager without mover threads then runs one mover cycle on this thread
 *       ({@link KvBlockManager#runMoverCycle()}: disk evictions, pressure-mode demotions).
 * </ol>
 * Not thread-safe; a replay runs on the calling thread (the manager's movers run beside it).
 */
public final class Replayer {

    /** Match attempts per request when matched blocks turn out lost below. */
    static final int MAX_MATCH_ATTEMPTS = 4;

    private final ReplayConfig config;
    private final KvLayout layout;
    private final Observation observation;

    /**
     * Creates a replayer.
     *
     * @param config the configuration
     */
    public Replayer(ReplayConfig config) {
        this(config, Observation.none());
    }

    /**
     * Creates a replayer whose manager is observed ({@code --kv-events}, {@code --metrics-port}).
     *
     * @param config      the configuration
     * @param observation the publisher and metrics endpoint its manager reports to
     */
    Replayer(ReplayConfig config, Observation observation) {
        this.config = config;
        this.layout = config.layout();
        this.observation = observation;
    }

    /**
     * Replays requests through a fresh manager, closed before returning.
     *
     * @param requests         the requests in arrival order
     * @param traceBlockTokens the block size the requests' ids were cut at; a multiple of the layout's block size
     * @param source           where the requests came from (for the report)
     * @param format           the trace format (for the report)
     * @param progress         a progress bar, or {@link Progress#none()}
     * @return the report
     * @throws IllegalArgumentException if the trace block size is not a multiple of the layout's
     */
    public ReplayReport run(List<TraceRequest> requests, int traceBlockTokens, String source, String format,
            Progress progress) {
        int bm = layout.blockSizeTokens();
        if (traceBlockTokens % bm != 0) {
            throw new IllegalArgumentException("block-tokens: " + bm + " (expected a divisor of the trace's block size "
                    + traceBlockTokens + ")");
        }
        try (Backend backend = config.tiered() ? new ManagerBackend(config, observation) : new SingleTierBackend(config)) {
            return new Run(backend, traceBlockTokens).replay(requests, source, format, progress);
        }
    }

    /** One replay's state. */
    private final class Run {
        private final Backend backend;
        private final int bt;
        private final int bm;
        private final int tvb;
        private final boolean full;
        private final Arena arena = Arena.ofConfined();
        private final MemorySegment image;
        private final MemorySegment zero;
        private final Histogram latency = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        private final Set<Long> seen = new HashSet<>();
        private int[] buf = new int[4096];
        private long promptTokens;
        private long hitTokens;
        private long ceilingTokens;
        private long prefillTokens;
        private long decodeTokens;
        private long rejected;
        private String firstRejection;
        private long lost;
        private long verified;
        private long verifyFailures;
        private long written;

        Run(Backend backend, int traceBlockTokens) {
            this.backend = backend;
            this.bt = traceBlockTokens;
            this.bm = layout.blockSizeTokens();
            this.tvb = layout.tokenVectorBytes();
            this.full = config.payload() == ReplayConfig.Payload.FULL;
            this.image = arena.allocate(layout.bytesPerBlock(), 64);
            this.zero = arena.allocate(tvb, 64);
        }

        ReplayReport replay(List<TraceRequest> requests, String source, String format, Progress progress) {
            long start = System.nanoTime();
            long firstTimestamp = requests.isEmpty() ? 0 : requests.get(0).timestampMillis();
            int done = requests.size();
            try (arena) {
                for (int n = 0; n < requests.size(); n++) {
                    if (Interrupts.requested()) {
                        done = n;
                        break;
                    }
                    TraceRequest r = requests.get(n);
                    if (config.speed() > 0) {
                        pace(start, (r.timestampMillis() - firstTimestamp) / config.speed());
                    }
                    request(n, r);
                    progress.update(n + 1, promptTokens == 0 ? 0 : (double) hitTokens / promptTokens);
                }
            }
            double wall = (System.nanoTime() - start) / 1e9;
            return report(done, source, format, wall);
        }

        private void pace(long start, double millis) {
            long target = start + (long) (millis * 1e6);
            long wait = target - System.nanoTime();
            if (wait > 0) {
                try {
                    TimeUnit.NANOSECONDS.sleep(wait);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while pacing the replay", e);
                }
            }
        }

        private void request(long n, TraceRequest r) {
            int k = r.blockCount();
            int input = r.inputLength();
            promptTokens += input;
            int tokens = k * bt;
            if (buf.length < tokens) {
                buf = new int[Math.max(tokens, buf.length * 2)];
            }
            int run = BlockContent.prompt(r, buf, bt, seen);
            ceilingTokens += Math.min((long) run * bt, input);
            Sequence seq = backend.open();
            try {
                long t0 = System.nanoTime();
                long excluded = 0;
                int matched = 0;
                for (int attempt = 0; ; attempt++) {
                    matched = tokens == 0 ? 0 : seq.matchPrefix(buf, tokens);
                    long verify = leaseMatched(seq, r, matched / bm);
                    if (verify >= 0 || attempt == MAX_MATCH_ATTEMPTS - 1) {
                        excluded += Math.abs(verify);
                        break;
                    }
                    // A matched block was lost below (its only copy found damaged): the manager has
                    // unindexed it; start over, as a runtime would.
                    excluded += -verify;
                    seq.close();
                    seq = backend.open();
                }
                latency.recordValue(Math.min(latency.getHighestTrackableValue(), System.nanoTime() - t0 - excluded));
                hitTokens += Math.min(matched, input);
                for (int p = matched; p < tokens; p++) {
                    int pos = seq.appendToken(buf[p]);
                    if (full && p % bm == 0) {
                        BlockContent.fill(payloadKey(r, p), image);
                    }
                    writeLayers(seq, pos);
                    prefillTokens++;
                }
                int answer = config.maxDecodeTokens() < 0 ? r.outputLength()
                        : Math.min(r.outputLength(), config.maxDecodeTokens());
                for (int j = 0; j < answer; j++) {
                    int pos = seq.appendToken(BlockContent.decodeToken(n, j));
                    if (full && pos % bm == 0) {
                        BlockContent.fill(BlockContent.payloadKey(~n, pos / bm), image);
                    }
                    writeLayers(seq, pos);
                    decodeTokens++;
                }
            } catch (CapacityExhaustedException | TransferTimeoutException e) {
                if (rejected++ == 0) {
                    firstRejection = "request " + n + ": " + e.getMessage();
                }
            } finally {
                seq.close();
            }
            backend.afterRequest();
        }

        private long payloadKey(TraceRequest r, int position) {
            return BlockContent.payloadKey(r.blockHash(position / bt), (position % bt) / bm);
        }

        /**
         * Leases each matched block in turn (promoting it) and verifies it.
         *
         * @return the nanoseconds spent verifying, or, when a block turned out lost below, minus
         *         that (and leasing stopped there)
         */
        private long leaseMatched(Sequence seq, TraceRequest r, int blocks) {
            long verifyNanos = 0;
            for (int i = 0; i < blocks; i++) {
                try (BlockLease lease = seq.lease(i * bm, (i + 1) * bm)) {
                    if (full) {
                        long v0 = System.nanoTime();
                        if (BlockContent.verify(payloadKey(r, i * bm), lease.block(0)) >= 0) {
                            verifyFailures++;
                        }
                        verified += layout.bytesPerBlock();
                        verifyNanos += System.nanoTime() - v0;
                    }
                } catch (CorruptBlockException e) {
                    lost++;
                    return -verifyNanos - 1;
                }
            }
            return verifyNanos;
        }

        private void writeLayers(Sequence seq, int pos) {
            int t = pos % bm;
            for (int l = 0; l < layout.layers(); l++) {
                if (full) {
                    seq.write(l, pos, image.asSlice(layout.offsetOf(l, KvLayout.K, t), tvb),
                            image.asSlice(layout.offsetOf(l, KvLayout.V, t), tvb));
                } else {
                    seq.write(l, pos, zero, zero);
                }
            }
            written += 2L * tvb * layout.layers();
        }

        /**
         * {@return the tier counters once the remote outbox is empty (at most 5 s), so the report's
         * "sent" counts what the run offered rather than what had gone when it ended}
         */
        private TierStats outboxDrained(TierStats ts) {
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (ts != null && ts.remote() != null && ts.remote().pushPending() > 0 && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
                ts = backend.tierStats();
            }
            return ts;
        }

        private ReplayReport report(long requests, String source, String format, double wall) {
            CacheStats cs = backend.cacheStats();
            TierStats ts = outboxDrained(backend.tierStats());
            ReplayReport.Move none = new ReplayReport.Move(0, 0);
            ReplayReport.Move down = ts == null ? none : move(ts.demotions());
            ReplayReport.Move spill = ts == null ? none : move(ts.diskSpills());
            ReplayReport.Move load = ts == null ? none : move(ts.diskLoads());
            ReplayReport.Move promoted = ts == null ? none : move(ts.promotions());
            ReplayReport.Move up = new ReplayReport.Move(Math.max(0, promoted.blocks() - load.blocks()),
                    Math.max(0, promoted.bytes() - load.bytes()));
            long belowHits = cs.prefixHitBlocksBelow();
            long deviceHits = cs.prefixHitBlocks() - belowHits;
            long diskHits = Math.min(belowHits, load.blocks());
            ReplayReport.Setup setup = new ReplayReport.Setup(layoutText(layout), bm, layout.bytesPerBlock(),
                    config.tiered(), config.deviceBlocks(), config.deviceBlocks() * bm,
                    ts == null ? 0 : ts.hostCapacityBlocks(), config.diskBytes(), config.compression().name(),
                    config.policy(), config.payload().name().toLowerCase(java.util.Locale.ROOT), config.recentBlocks(),
                    config.tiered() ? config.movers() : 0, config.maxDecodeTokens(), config.speed());
            ReplayReport.Events events = new ReplayReport.Events(cs.demotions(), cs.promotions(), cs.failedDemotions(),
                    cs.failedPromotions(), cs.evictions(), ts == null ? 0 : ts.hostEvictions(),
                    ts == null || ts.disk() == null ? 0 : ts.disk().evictions(), cs.cleanDrops(),
                    ts == null ? 0 : ts.hostCleanDrops(), spill.blocks(), cs.copiesOnWrite(), cs.admissionFailures(),
                    verifyFailures, ts == null || ts.disk() == null ? 0 : ts.disk().corruptMisses(),
                    ts == null || ts.disk() == null ? 1.0 : ts.disk().compressionRatio());
            ReplayReport.Latency lat = new ReplayReport.Latency(latency.getTotalCount(), latency.getMean() / 1e3,
                    latency.getValueAtPercentile(50) / 1e3, latency.getValueAtPercentile(90) / 1e3,
                    latency.getValueAtPercentile(99) / 1e3, latency.getValueAtPercentile(99.9) / 1e3,
                    latency.getMaxValue() / 1e3);
            TierStats.RemoteTierStats remote = ts == null ? null : ts.remote();
            return new ReplayReport(source, format, bt, setup, requests, rejected, firstRejection, promptTokens,
                    hitTokens,
                    promptTokens == 0 ? 0 : (double) hitTokens / promptTokens,
                    promptTokens == 0 ? 0 : (double) ceilingTokens / promptTokens, prefillTokens, decodeTokens,
                    new ReplayReport.Hits(cs.prefixHitBlocks(), deviceHits, belowHits - diskHits, diskHits, lost),
                    new ReplayReport.Moves(down, up, spill, load, written, verified), events, lat, wall,
                    wall > 0 ? requests / wall : 0, wall > 0 ? (promptTokens + decodeTokens) / wall : 0,
                    backend.invariants(), remote); // one atomic snapshot: a violation is a failure, no re-check
        }
    }

    private static ReplayReport.Move move(TierStats.MoveStats m) {
        return new ReplayReport.Move(m.blocks(), m.bytes());
    }

    /**
     * A layout as text, for example {@code L=1 H=1 D=8 F16}.
     *
     * @param l the layout
     * @return the text
     */
    static String layoutText(KvLayout l) {
        return "L=" + l.layers() + " H=" + l.kvHeads() + " D=" + l.headDim() + " " + l.dtype();
    }

    // ------------------------------------------------------------------------------------ backends

    /** What a replay runs against. */
    private abstract static class Backend implements AutoCloseable {
        abstract Sequence open();

        /** {@return the device tier's counters} */
        abstract CacheStats cacheStats();

        abstract TierStats tierStats();

        abstract List<String> invariants();

        /** Called after every request: runs the manager's mover cycle when it has no mover threads. */
        void afterRequest() {
        }

        @Override
        public abstract void close();
    }

    /** The manager's block model alone: a single-tier prefix cache (no lower tier). */
    private static final class SingleTierBackend extends Backend {
        private final SlabMemory memory;
        private final PagedKvCache cache;

        SingleTierBackend(ReplayConfig c) {
            int blocks = (int) Math.min(Integer.MAX_VALUE / 4, c.deviceBlocks());
            long slab = (long) blocks * c.layout().bytesPerBlock();
            long meta = PagedKvCache.metadataBytes(c.layout(), blocks);
            // The slab is allocated whole and zero-filled, as the manager's pools are: check it first.
            MachineMemory.now().ifPresent(m -> m.checkHost("device.budgetBytes", c.deviceBytes(), slab + meta,
                    MachineMemory.format(slab + meta) + " = device slab " + MachineMemory.format(slab)
                            + " + block metadata " + MachineMemory.format(meta) + " (" + blocks + " block ids)"));
            CacheOptions options = new CacheOptions(c.layout(), blocks, blocks, c.policy(), HashAlgorithm.SHA256_128,
                    c.recentBlocks(), c.admissionTimeoutNanos(), CacheOptions.DEFAULT_PROMOTION_TIMEOUT_NANOS);
            this.memory = new SlabMemory(blocks, c.layout().bytesPerBlock());
            try {
                this.cache = new PagedKvCache(options, memory, null);
            } catch (RuntimeException e) {
                memory.close();
                throw e;
            }
        }

        @Override
        Sequence open() {
            return cache.openSequence(SequenceOptions.defaults());
        }

        @Override
        CacheStats cacheStats() {
            return cache.stats();
        }

        @Override
        TierStats tierStats() {
            return null;
        }

        @Override
        List<String> invariants() {
            return cache.checkInvariants();
        }

        @Override
        public void close() {
            cache.close();
            memory.close();
        }
    }

    /** A {@link KvBlockManager} over an emulated device, a host tier and an optional disk tier. */
    private static final class ManagerBackend extends Backend {
        private final EmulatedDevice device;
        private final KvBlockManager kv;
        private final Path tempDir;
        private final boolean moverCycles;

        ManagerBackend(ReplayConfig c, Observation observation) {
            this.moverCycles = c.movers() == 0;
            KvLayout layout = c.layout();
            long block = layout.bytesPerBlock();
            long host = c.hostBytes() > 0 ? c.hostBytes() : block;
            Path temp = null;
            EmulatedDevice dev = new EmulatedDevice(c.deviceBytes() + block);
            try {
                KvBlockManagerBuilder b = KvBlockManager.builder(layout)
                        .device(dev, c.deviceBytes())
                        .host(host)
                        .policy(c.policy())
                        .recentDeviceBlocks(c.recentBlocks())
                        .movers(c.movers())
                        .admissionTimeoutNanos(c.admissionTimeoutNanos());
                if (c.diskBytes() > 0) {
                    Path dir = c.diskDir();
                    if (dir == null) {
                        temp = Interrupts.createTempDirectory("tierkv-replay-");
                        dir = temp.resolve("disk");
                    }
                    b.disk(diskOptions(dir, layout, c.diskBytes(), c.compression()));
                }
                if (c.remote() != null) {
                    b.remote(c.remote());
                }
                this.kv = buildWith(observation.configure(b), c);
                observation.attach(kv);
            } catch (IOException e) {
                dev.close();
                Interrupts.deleteTempDirectory(temp);
                throw new UncheckedIOException("cannot create a temporary disk directory", e);
            } catch (RuntimeException e) {
                dev.close();
                Interrupts.deleteTempDirectory(temp);
                throw e;
            }
            this.device = dev;
            this.tempDir = temp;
        }

        /** Builds the manager; a remote store that cannot be reached is one line naming {@code --remote}. */
        private static KvBlockManager buildWith(KvBlockManagerBuilder b, ReplayConfig c) {
            try {
                return b.build();
            } catch (io.tierkv.remote.RemoteUnavailableException e) {
                String why = "--remote " + c.remote().url() + ": the store is unavailable ("
                        + e.reason() + ")";
                throw new UncheckedIOException(why, new IOException(why, e));
            }
        }

        @Override
        Sequence open() {
            return kv.openSequence(SequenceOptions.defaults());
        }

        @Override
        CacheStats cacheStats() {
            return kv.stats().cache();
        }

        @Override
        TierStats tierStats() {
            return kv.stats();
        }

        @Override
        void afterRequest() {
            if (moverCycles) {
                kv.runMoverCycle();
            }
        }

        @Override
        List<String> invariants() {
            return kv.checkInvariants();
        }

        @Override
        public void close() {
            try {
                kv.close();
            } finally {
                device.close();
                Interrupts.deleteTempDirectory(tempDir);
            }
        }
    }

    /**
     * Disk options for a budget: segments of at most 64 MiB, at most a quarter of the budget, and
     * at least one record.
     *
     * @param dir         the directory
     * @param layout      the block layout
     * @param budget      the disk budget in bytes
     * @param compression record compression
     * @return the options
     * @throws IllegalArgumentException naming {@code --disk-bytes} if the budget cannot hold one segment,
     *                                  its metadata and journal
     */
    static DiskOptions diskOptions(Path dir, KvLayout layout, long budget, Compression compression) {
        long need = alignUp(64 + DiskFormat.maxRecordBytes(layout), 4096);
        long quarter = (budget - DiskFormat.META_BYTES) / 4 / 4096 * 4096;
        long segment = Math.max(need, Math.min(DiskOptions.DEFAULT_SEGMENT_BYTES, quarter));
        if (budget < segment + DiskFormat.META_BYTES) {
            throw new IllegalArgumentException("--disk-bytes " + Sizes.bytes(budget) + " (expected >= "
                    + (segment + DiskFormat.META_BYTES) + ": one segment holding a record of this layout, plus metadata)");
        }
        DiskOptions options = DiskOptions.at(dir).withSegmentBytes(segment).withBudgetBytes(budget)
                .withCompression(compression);
        try {
            options.checkFor(layout);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--disk-bytes " + Sizes.bytes(budget) + ": " + e.getMessage());
        }
        return options;
    }

    private static long alignUp(long v, long a) {
        return (v + a - 1) / a * a;
    }

    /**
     * Deletes a directory tree; null and absent paths are ignored.
     *
     * @param root the tree
     */
    static void deleteTree(Path root) {
        if (root == null || !Files.exists(root)) {
            return;
        }
        try (Stream<Path> s = Files.walk(root)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    // best effort: a temporary directory
                }
            });
        } catch (IOException e) {
            // best effort
        }
    }
}
