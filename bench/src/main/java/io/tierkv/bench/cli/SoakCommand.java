package io.tierkv.bench.cli;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.CacheStats;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.error.TransferTimeoutException;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.TierStats;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskFaultInjection;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.DiskStats;
import io.tierkv.tiers.disk.DiskTier;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tierkv soak}: a long randomized run of a {@link KvBlockManager} with device, host and disk
 * budgets far below the working set, looking for wrong bytes, leaks and broken invariants.
 *
 * <p>Workload. {@code --threads} workers each repeat a random operation on documents drawn with a
 * skew towards low numbers (so prefixes repeat). Token {@code i} of document {@code d} and every
 * byte written for it depend only on {@code (d, i)}, so any block a prefix match returns, from any
 * tier or from a recovered disk record, must hold exactly the document's bytes. Operations:
 * <ul>
 *   <li><b>request</b>: open a sequence, {@code matchPrefix} the document's first tokens, append and
 *       write (every layer) the rest, verify every position, sometimes fork it and extend the fork
 *       (copy-on-write of the shared tail), then keep it open or close it;
 *   <li><b>append</b>: extend a kept sequence by 1 to 32 tokens and verify them;
 *   <li><b>lease</b>: lease a random range of a kept sequence and verify it;
 *   <li><b>fork</b>: fork a kept sequence, extend and verify the fork, close it;
 *   <li><b>close</b>: close a kept sequence;
 *   <li><b>restart</b>: every {@code --restart-every}, the main thread stops the workers at an
 *       operation boundary, closes every kept sequence and the whole manager (its disk tier is
 *       persistent), and builds a new manager over the same directory. Recovered disk records then
 *       serve prefix hits (adopted by hash), and are verified like any other block.
 * </ul>
 * Verification reads every position through a lease of at most four blocks (each promoted to the
 * device) and compares K and V of every layer word by word, and checks the stored token ids.
 *
 * <p>Back-pressure is not a fault: {@code CapacityExhaustedException} and
 * {@code TransferTimeoutException} (no room on the device in time) are counted and the
 * operation's sequences are closed. So is {@code CorruptBlockException} for a block "lost below"
 * (its only copy found damaged when a lease needed it; the manager unindexes it and a runtime
 * recomputes it), as long as a detected corruption explains it.
 *
 * <p>Fault injection ({@code --corrupt-rate R}): a {@link DiskFaultInjection} flips one bit in the
 * file of a fraction R of the disk records about to be verified (loads, matches, puts of a key
 * already stored), inside the bytes the check covers, so the tier's real checks and its real
 * corruption path run. Lost blocks are then expected, and reported beside the injected count.
 *
 * <p>Checks, every one a fault that makes the exit status 1:
 * <ul>
 *   <li><b>mismatches</b>: bytes or token ids read back that differ from the document's;
 *   <li><b>invariant violations</b>: {@code kv.checkInvariants()} runs every second (and at the end);
 *       a check can race a mover in the middle of a move, so a non-empty answer is re-checked twice
 *       50 ms apart and counted only if both re-checks fail too (otherwise counted as transient);
 *   <li><b>leaked blocks</b>: after every sequence is closed at the end, {@code liveBlocks -
 *       cachedBlocks} of {@code kv.stats().cache()}: block ids still in use that are not cached
 *       (reference count 0 with a hash). Must be 0;
 *   <li><b>corruption</b>: every injected corruption detected ({@code DiskStats.corruptMisses}
 *       summed over the managers equals the injector's count, 0 without injection), and no block
 *       lost below ({@code CacheStats.lostBlocks}, or a lease that failed with
 *       {@code CorruptBlockException}) without a detected corruption to explain it;
 *   <li><b>file descriptors</b>: entries of {@code /proc/self/fd} at the start and at the end (after
 *       the manager is closed and a temporary directory deleted); growth beyond
 *       {@code --fd-tolerance} is a fault;
 *   <li><b>disk peak</b>: the highest {@code DiskStats.usedBytes} sampled (every 100 ms, after each
 *       restart and at the end) must not exceed the disk budget;
 *   <li>any other exception in a worker or a mover.
 * </ul>
 */
@Command(name = "soak", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Soak a KV block manager: random append, fork, match, lease, close and disk-tier restarts "
                + "with budgets far below the working set; every byte read is verified.",
            "Exit status: 0, or 1 on a mismatch, a leaked block, an invariant violation, an injected corruption "
                    + "not detected, a block lost below with no detected corruption to explain it, file descriptor "
                    + "growth, disk use above its budget, or an unexpected exception."})
public final class SoakCommand implements Callable<Integer> {

    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;
    private static final int LEASE_CHUNK_BLOCKS = 4;
    private static final int MAX_KEPT = 2;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Option(names = "--duration", paramLabel = "TIME", defaultValue = "60s",
            description = "how long to run: 500ms, 60s, 10m, 1h (default: ${DEFAULT-VALUE})")
    private String duration;

    @Option(names = "--threads", paramLabel = "T", defaultValue = "4",
            description = "worker threads (default: ${DEFAULT-VALUE})")
    private int threads;

    @Option(names = "--movers", paramLabel = "N", defaultValue = "2",
            description = "background mover threads of the manager, 0..8 (default: ${DEFAULT-VALUE})")
    private int movers;

    @Option(names = "--seed", paramLabel = "SEED", defaultValue = "42",
            description = "seed of the workers' choices (default: ${DEFAULT-VALUE}); thread scheduling still varies")
    private long seed;

    @Option(names = "--block-tokens", paramLabel = "B", defaultValue = "16",
            description = "tokens per block; the layout is 2 layers x 2 KV heads x dim 4, F32 (32 B per token "
                    + "vector, 2 KiB per block at 16) (default: ${DEFAULT-VALUE})")
    private int blockTokens;

    @Option(names = "--documents", paramLabel = "N", defaultValue = "512",
            description = "distinct documents (default: ${DEFAULT-VALUE})")
    private int documents;

    @Option(names = "--max-blocks", paramLabel = "N", defaultValue = "8",
            description = "longest request in blocks; working set = documents x max-blocks "
                    + "(default: ${DEFAULT-VALUE})")
    private int maxBlocks;

    @Option(names = "--device-blocks", paramLabel = "N", defaultValue = "32",
            description = "device tier budget in blocks (default: ${DEFAULT-VALUE})")
    private int deviceBlocks;

    @Option(names = "--host-blocks", paramLabel = "N", defaultValue = "64",
            description = "pinned host tier budget in blocks (default: ${DEFAULT-VALUE})")
    private int hostBlocks;

    @Option(names = "--disk-bytes", paramLabel = "SIZE", defaultValue = "4m",
            description = "disk tier budget, every file counted (default: ${DEFAULT-VALUE})")
    private String diskBytes;

    @Option(names = "--disk-dir", paramLabel = "DIR",
            description = "disk tier directory, dedicated to this run (default: a temporary directory, deleted "
                    + "afterwards)")
    private Path diskDir;

    @Option(names = "--compression", paramLabel = "CODEC", defaultValue = "lz4",
            description = "disk records: lz4 or none (default: ${DEFAULT-VALUE})")
    private Compression compression;

    @Option(names = "--restart-every", paramLabel = "TIME", defaultValue = "10s",
            description = "close the manager and reopen it over the same (persistent) disk directory this often; "
                    + "0 = never (default: ${DEFAULT-VALUE})")
    private String restartEvery;

    @Option(names = "--recent-blocks", paramLabel = "N", defaultValue = "1",
            description = "sealed blocks at the end of each open sequence kept on the device "
                    + "(default: ${DEFAULT-VALUE})")
    private int recentBlocks;

    @Option(names = "--admission-timeout-ms", paramLabel = "MS", defaultValue = "50",
            description = "how long an allocation or lease waits for device space before back-pressure "
                    + "(default: ${DEFAULT-VALUE})")
    private long admissionTimeoutMs;

    @Option(names = "--corrupt-rate", paramLabel = "R", defaultValue = "0",
            description = "fault injection: the fraction of disk-record verifications (loads, matches, puts of a "
                    + "key already stored) that find their record damaged: a bit flipped in the record's file just "
                    + "before the check reads it (DiskFaultInjection); 0 = none (default: ${DEFAULT-VALUE})")
    private double corruptRate;

    @Option(names = "--fd-tolerance", paramLabel = "N", defaultValue = "8",
            description = "open file descriptors the run may end with beyond those it started with "
                    + "(default: ${DEFAULT-VALUE})")
    private int fdTolerance;

    private KvLayout layout;
    private DiskOptions diskOptions;
    private final ReentrantReadWriteLock gate = new ReentrantReadWriteLock(true);
    private volatile KvBlockManager kv;
    private EmulatedDevice device;
    private volatile boolean stop;
    private long startNanos;
    private int generation;

    private final LongAdder requests = new LongAdder();
    private final LongAdder appends = new LongAdder();
    private final LongAdder leases = new LongAdder();
    private final LongAdder forks = new LongAdder();
    private final LongAdder closes = new LongAdder();
    private final LongAdder matchedTokens = new LongAdder();
    private final LongAdder backPressure = new LongAdder();
    private final LongAdder lostBelow = new LongAdder();
    private final LongAdder verifiedBytes = new LongAdder();
    private final LongAdder mismatches = new LongAdder();
    private final LongAdder moverBackPressure = new LongAdder();
    private final ConcurrentLinkedQueue<String> mismatchSamples = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
    private final AtomicLong peakDiskBytes = new AtomicLong();

    /** Totals of the stats of closed managers (one per restart). */
    private final long[] moved = new long[8];
    private long prefixHits;
    private long prefixHitsBelow;
    private long diskAdoptions;
    private long recoveredBlocks;
    private long diskMisses;
    private long corruptMisses;
    private long recoveryFaults;
    private long lostBlocks;

    /** Creates the command (picocli instantiates it). */
    public SoakCommand() {
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        long durationNanos = parseDuration(duration, "--duration");
        long restartNanos = parseDuration(restartEvery, "--restart-every");
        if (durationNanos <= 0) {
            throw new IllegalArgumentException("--duration " + duration + " (expected > 0, such as 500ms or 60s)");
        }
        validate();
        int fdStart = openFds();
        layout = KvLayout.of(2, 2, 4, DType.F32, blockTokens);
        long block = layout.bytesPerBlock();
        long diskBudget = Sizes.parseBytes(diskBytes);
        try { // the budget, before any temporary directory exists
            DiskTier.check(Replayer.diskOptions(Path.of("disk"), layout, diskBudget, compression).withPersistent(true),
                    layout);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage().startsWith("--") ? e.getMessage()
                    : "--disk-bytes " + Sizes.bytes(diskBudget) + ": " + e.getMessage());
        }
        Interrupts.cooperate();
        Path temp = null;
        Path dir = diskDir;
        if (dir == null) {
            temp = Interrupts.createTempDirectory("tierkv-soak-");
            dir = temp.resolve("disk");
        }
        diskOptions = Replayer.diskOptions(dir, layout, diskBudget, compression).withPersistent(true);
        long workingBlocks = (long) documents * maxBlocks;
        out.printf(Locale.ROOT, "tierkv soak: %s, %d threads, %d movers, seed %d, restart every %s%n", duration,
                threads, movers, seed, restartNanos == 0 ? "never" : restartEvery);
        out.printf(Locale.ROOT, "layout: %d layers x %d KV heads x dim %d %s, %d tokens/block (%s/block)%n",
                layout.layers(), layout.kvHeads(), layout.headDim(), layout.dtype(), blockTokens, Sizes.bytes(block));
        out.printf(Locale.ROOT, "budgets: device %d blocks (%s), host %d blocks (%s), disk %s (%s segments) in %s%n",
                deviceBlocks, Sizes.bytes(deviceBlocks * block), hostBlocks, Sizes.bytes(hostBlocks * block),
                Sizes.bytes(diskBudget), Sizes.bytes(diskOptions.segmentBytes()), dir);
        out.printf(Locale.ROOT, "working set: %d documents x %d blocks = %d blocks (%s)%n", documents, maxBlocks,
                workingBlocks, Sizes.bytes(workingBlocks * block));
        out.flush();

        List<Worker> workers = new ArrayList<>();
        List<Thread> workerThreads = new ArrayList<>();
        long invariantChecks = 0;
        long invariantViolations = 0;
        long transientViolations = 0;
        List<String> violationSamples = new ArrayList<>();
        int restarts = 0;
        long leaked;
        CacheStats endCache;
        DiskFaultInjection injection = corruptRate > 0 ? DiskFaultInjection.install(corruptRate, seed) : null;
        long t0 = System.nanoTime();
        startNanos = t0;
        try {
            open();
            for (int w = 0; w < threads; w++) {
                Worker worker = new Worker(seed * 1_000_003L + w);
                workers.add(worker);
                workerThreads.add(Thread.ofPlatform().name("soak-worker-" + w).start(worker));
            }
            long end = t0 + durationNanos;
            long nextCheck = t0 + 1_000_000_000L;
            long nextRestart = restartNanos == 0 ? Long.MAX_VALUE : t0 + restartNanos;
            while (!stop && !Interrupts.requested()) {
                long now = System.nanoTime();
                if (now >= end) {
                    break;
                }
                if (!unexpected.isEmpty()) {
                    break;
                }
                Thread.sleep(Math.max(1, Math.min(100, (end - now) / 1_000_000)));
                sampleDisk();
                now = System.nanoTime();
                if (now >= nextCheck) {
                    nextCheck = now + 1_000_000_000L;
                    invariantChecks++;
                    int verdict = checkInvariants(violationSamples);
                    if (verdict == 2) {
                        invariantViolations++;
                    } else if (verdict == 1) {
                        transientViolations++;
                    }
                }
                if (now >= nextRestart && now + 500_000_000L < end) {
                    restart(workers);
                    restarts++;
                    nextRestart = System.nanoTime() + restartNanos;
                }
            }
            stop = true;
            for (Thread t : workerThreads) {
                t.join(60_000);
                if (t.isAlive()) {
                    unexpected.add(new IllegalStateException(t.getName() + " did not stop within 60 s"));
                }
            }
            for (Worker w : workers) {
                w.closeKept();
            }
            leaked = leakedBlocks();
            endCache = kv.stats().cache();
            invariantChecks++;
            int verdict = checkInvariants(violationSamples);
            if (verdict == 2) {
                invariantViolations++;
            } else if (verdict == 1) {
                transientViolations++;
            }
            sampleDisk();
        } finally {
            stop = true;
            closeManager();
            if (injection != null) {
                injection.uninstall();
            }
            Interrupts.deleteTempDirectory(temp);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        int fdEnd = openFds();

        long ops = requests.sum() + appends.sum() + leases.sum() + forks.sum() + closes.sum();
        if (Interrupts.requested()) {
            out.printf(Locale.ROOT, "interrupted after %.1f s of %s: partial summary%n", seconds, duration);
        }
        out.printf(Locale.ROOT, "ran %.1f s%n", seconds);
        out.printf(Locale.ROOT, "operations: %d (%.0f/s): requests %d, appends %d, leases %d, forks %d, closes %d, "
                + "restarts %d%n", ops, ops / seconds, requests.sum(), appends.sum(), leases.sum(), forks.sum(),
                closes.sum(), restarts);
        out.printf(Locale.ROOT, "back-pressure (not faults): %d operations without device room in time, %d mover "
                + "back-pressure errors%n", backPressure.sum(), moverBackPressure.sum());
        long injected = injection == null ? 0 : injection.injected();
        out.printf(Locale.ROOT, "corruption: %d records damaged by injection (rate %s), %d detected (disk corrupt "
                + "misses), %d damaged regions skipped by recovery at restarts%n", injected,
                injection == null ? "0: off" : Double.toString(corruptRate), corruptMisses, recoveryFaults);
        out.printf(Locale.ROOT, "blocks lost below: %d (referenced blocks whose only copy was found damaged; %d "
                + "leases or reads failed with CorruptBlockException and the runtime recomputed them)%n", lostBlocks,
                lostBelow.sum());
        out.printf(Locale.ROOT, "prefix hits: %d blocks (%d below the device), %d tokens matched; disk: %d adoptions, "
                + "%d blocks recovered at restarts, %d misses%n", prefixHits, prefixHitsBelow, matchedTokens.sum(),
                diskAdoptions, recoveredBlocks, diskMisses);
        out.printf(Locale.ROOT, "bytes moved: demotions %s (%d blocks), promotions %s (%d), disk spills %s (%d), "
                + "disk loads %s (%d)%n", Sizes.bytes(moved[0]), moved[1], Sizes.bytes(moved[2]), moved[3],
                Sizes.bytes(moved[4]), moved[5], Sizes.bytes(moved[6]), moved[7]);
        out.printf(Locale.ROOT, "bytes verified: %s%n", Sizes.bytes(verifiedBytes.sum()));
        out.printf(Locale.ROOT, "mismatches: %d%n", mismatches.sum());
        for (String s : mismatchSamples) {
            out.println("  " + s);
        }
        out.printf(Locale.ROOT, "invariant checks: %d, violations %d (a failed check counts only if it still fails "
                + "when re-checked twice 50 ms apart; %d transient, passed on re-check)%n", invariantChecks,
                invariantViolations, transientViolations);
        for (String s : violationSamples) {
            out.println("  " + s);
        }
        out.printf(Locale.ROOT, "leaked blocks: %d (live block ids minus cached blocks after every sequence closed; "
                + "live %d, cached %d)%n", leaked, endCache.liveBlocks(), endCache.cachedBlocks());
        out.printf(Locale.ROOT, "open file descriptors: start %d, end %d (tolerance +%d)%n", fdStart, fdEnd,
                fdTolerance);
        out.printf(Locale.ROOT, "disk peak: %s of budget %s (%.1f%%)%n", Sizes.bytes(peakDiskBytes.get()),
                Sizes.bytes(diskBudget), 100.0 * peakDiskBytes.get() / diskBudget);
        out.printf(Locale.ROOT, "unexpected exceptions: %d%n", unexpected.size());
        int shown = 0;
        for (Throwable t : unexpected) {
            if (shown++ == 3) {
                break;
            }
            out.println("  " + stackTop(t));
        }

        List<String> faults = new ArrayList<>();
        if (mismatches.sum() > 0) {
            faults.add(mismatches.sum() + " mismatches");
        }
        if (invariantViolations > 0) {
            faults.add(invariantViolations + " invariant violations");
        }
        if (leaked != 0) {
            faults.add(leaked + " leaked blocks");
        }
        if (corruptMisses != injected) {
            faults.add(injected + " corruptions injected but " + corruptMisses + " detected");
        }
        if ((lostBlocks > 0 || lostBelow.sum() > 0) && corruptMisses == 0) {
            faults.add(Math.max(lostBlocks, lostBelow.sum()) + " blocks lost below with no detected corruption to "
                    + "explain them");
        }
        if (fdEnd - fdStart > fdTolerance) {
            faults.add("file descriptors grew by " + (fdEnd - fdStart));
        }
        if (peakDiskBytes.get() > diskBudget) {
            faults.add("disk peak above budget");
        }
        if (!unexpected.isEmpty()) {
            faults.add(unexpected.size() + " unexpected exceptions");
        }
        if (ops == 0) {
            faults.add("no operation completed");
        }
        out.println(faults.isEmpty() ? "result: PASS" : "result: FAIL (" + String.join(", ", faults) + ")");
        out.flush();
        return faults.isEmpty() ? 0 : 1;
    }

    private void validate() {
        Check.atLeast("--threads", threads, 1);
        Check.between("--movers", movers, 0, 8, "");
        Check.atLeast("--block-tokens", blockTokens, 1);
        Check.atLeast("--documents", documents, 1);
        Check.atLeast("--max-blocks", maxBlocks, 1);
        Check.atLeast("--device-blocks", deviceBlocks, 2);
        Check.atLeast("--host-blocks", hostBlocks, 1);
        Check.atLeast("--recent-blocks", recentBlocks, 0);
        Check.atLeast("--admission-timeout-ms", admissionTimeoutMs, 0);
        Check.atLeast("--fd-tolerance", fdTolerance, 0);
        Check.between("--corrupt-rate", corruptRate, 0, 1);
        if ((long) maxBlocks * blockTokens > 1_000_000) {
            throw new IllegalArgumentException("--max-blocks " + maxBlocks + " x --block-tokens " + blockTokens + ": "
                    + (long) maxBlocks * blockTokens + " tokens per document (expected <= 1000000)");
        }
        Check.bytes("--disk-bytes", diskBytes);
    }

    /**
     * Parses a duration: a number with an optional unit {@code ms}, {@code s} (default), {@code m} or
     * {@code h}.
     *
     * @param text  for example {@code 60s}, {@code 10m}, {@code 1h}
     * @param field the option's name, for the message
     * @return nanoseconds, {@code >= 0}
     * @throws IllegalArgumentException if the text is not a duration
     */
    static long parseDuration(String text, String field) {
        Matcher m = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)?").matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException(field + " " + text + " (expected a duration such as 500ms, 60s, "
                    + "10m, 1h)");
        }
        double v = Double.parseDouble(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        double scale = switch (unit) {
            case "ms" -> 1e6;
            case "m" -> 60e9;
            case "h" -> 3600e9;
            default -> 1e9;
        };
        return Math.round(v * scale);
    }

    private void open() {
        long block = layout.bytesPerBlock();
        EmulatedDevice dev = new EmulatedDevice((deviceBlocks + 1L) * block);
        try {
            kv = KvBlockManager.builder(layout)
                    .device(dev, deviceBlocks * block)
                    .host(hostBlocks * block)
                    .disk(diskOptions)
                    .recentDeviceBlocks(recentBlocks)
                    .movers(movers)
                    .admissionTimeoutNanos(admissionTimeoutMs * 1_000_000L)
                    .errorHandler(this::moverError)
                    .build();
        } catch (RuntimeException e) {
            dev.close();
            throw e;
        }
        device = dev;
        generation++;
        DiskStats ds = kv.stats().disk();
        if (ds != null) {
            recoveredBlocks += ds.recoveredBlocks();
            recoveryFaults += ds.recoveryFaults();
        }
        sampleDisk();
    }

    private void moverError(Throwable t) {
        if (t instanceof CapacityExhaustedException || t instanceof TransferTimeoutException) {
            moverBackPressure.increment();
        } else {
            unexpected.add(new IllegalStateException("mover error", t));
        }
    }

    private void closeManager() {
        KvBlockManager k = kv;
        if (k != null) {
            try {
                sampleDisk();
                TierStats st = k.stats();
                TierStats.MoveStats[] m = {st.demotions(), st.promotions(), st.diskSpills(), st.diskLoads()};
                for (int i = 0; i < m.length; i++) {
                    moved[2 * i] += m[i].bytes();
                    moved[2 * i + 1] += m[i].blocks();
                }
                prefixHits += st.cache().prefixHitBlocks();
                prefixHitsBelow += st.cache().prefixHitBlocksBelow();
                diskAdoptions += st.diskAdoptions();
                diskMisses += st.diskMisses();
                lostBlocks += st.cache().lostBlocks();
                if (st.disk() != null) {
                    corruptMisses += st.disk().corruptMisses();
                }
            } finally {
                k.close();
                kv = null;
            }
        }
        if (device != null) {
            device.close();
            device = null;
        }
    }

    /** Stops the workers at an operation boundary, closes their sequences and the manager, reopens. */
    private void restart(List<Worker> workers) {
        gate.writeLock().lock();
        try {
            for (Worker w : workers) {
                w.closeKept();
            }
            closeManager();
            open();
        } finally {
            gate.writeLock().unlock();
        }
    }

    private void sampleDisk() {
        KvBlockManager k = kv;
        if (k == null) {
            return;
        }
        try {
            DiskStats ds = k.stats().disk();
            if (ds != null) {
                peakDiskBytes.accumulateAndGet(ds.usedBytes(), Math::max);
            }
        } catch (IllegalStateException e) {
            // closed by a restart in between
        }
    }

    /**
     * @return 0 consistent, 1 a transient violation (passed on re-check), 2 a violation
     */
    private int checkInvariants(List<String> samples) throws InterruptedException {
        gate.readLock().lock();
        try {
            List<String> bad = kv.checkInvariants();
            if (bad.isEmpty()) {
                return 0;
            }
            for (int i = 0; i < 2; i++) {
                Thread.sleep(50);
                List<String> again = kv.checkInvariants();
                if (again.isEmpty()) {
                    return 1;
                }
                bad = again;
            }
            if (samples.size() < 5) {
                samples.add(String.format(Locale.ROOT, "at %.1f s, manager %d: %s", (System.nanoTime() - startNanos)
                        / 1e9, generation, bad.size() > 3 ? bad.subList(0, 3) + " ..." : bad.toString()));
            }
            return 2;
        } finally {
            gate.readLock().unlock();
        }
    }

    /** Live block ids minus cached blocks, re-read twice 50 ms apart while a mover may be mid-move. */
    private long leakedBlocks() throws InterruptedException {
        long leaked = 0;
        for (int i = 0; i < 3; i++) {
            CacheStats cs = kv.stats().cache();
            leaked = (long) cs.liveBlocks() - cs.cachedBlocks();
            if (leaked == 0) {
                return 0;
            }
            Thread.sleep(50);
        }
        return leaked;
    }

    /**
     * Open file descriptors of this process.
     *
     * @return entries of {@code /proc/self/fd}, or -1 where there is no such directory
     */
    static int openFds() {
        Path fd = Path.of("/proc/self/fd");
        if (!Files.isDirectory(fd)) {
            return -1;
        }
        try (Stream<Path> s = Files.list(fd)) {
            return (int) s.count();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + fd, e);
        }
    }

    private static String stackTop(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            sb.append(c).append(c.getStackTrace().length > 0 ? " at " + c.getStackTrace()[0] : "");
            if (c.getCause() != null) {
                sb.append(" <- ");
            }
        }
        return sb.toString();
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Token {@code pos} of document {@code doc}. */
    private static int token(int doc, int pos) {
        return (int) (mix(doc * GOLDEN + pos + 0x50A4_0000_0001L) >>> 33);
    }

    /** Word {@code w} of the K ({@code kv} 0) or V (1) vector of layer {@code layer} at {@code pos} of {@code doc}. */
    private static long word(int doc, int pos, int layer, int kv, int w) {
        return mix(mix(doc + 0x50A4_0000_0002L) + (((long) pos * 64 + layer) * 2 + kv) * 0x100000001B3L + w);
    }

    /** One worker: its random source, scratch vectors and the sequences it keeps open between operations. */
    private final class Worker implements Runnable {
        private final Random rnd;
        private final List<Kept> kept = new ArrayList<>();
        private MemorySegment k;
        private MemorySegment v;

        Worker(long seed) {
            this.rnd = new Random(seed);
        }

        @Override
        public void run() {
            try (Arena arena = Arena.ofConfined()) {
                k = arena.allocate(layout.tokenVectorBytes(), 8);
                v = arena.allocate(layout.tokenVectorBytes(), 8);
                while (!stop) {
                    gate.readLock().lock();
                    try {
                        if (kv == null) {
                            continue;
                        }
                        oneOperation();
                    } catch (CapacityExhaustedException | TransferTimeoutException e) {
                        backPressure.increment();
                    } catch (CorruptBlockException e) {
                        lostBelow.increment();
                    } catch (Throwable t) {
                        unexpected.add(t);
                        stop = true;
                    } finally {
                        gate.readLock().unlock();
                    }
                }
            } catch (Throwable t) {
                unexpected.add(t);
                stop = true;
            }
        }

        /** Closes every kept sequence (the worker is between operations, or stopped). */
        void closeKept() {
            for (Kept s : kept) {
                s.seq.close();
            }
            kept.clear();
        }

        private int document() {
            double u = rnd.nextDouble();
            return (int) (u * u * documents); // skewed towards low numbers, so prefixes repeat
        }

        private void oneOperation() {
            int r = rnd.nextInt(100);
            if (kept.isEmpty() || r < 45) {
                request();
            } else if (r < 62) {
                Kept s = kept.get(rnd.nextInt(kept.size()));
                guarded(s, () -> {
                    extend(s.seq, s.doc, 1 + rnd.nextInt(32));
                    appends.increment();
                });
            } else if (r < 80) {
                Kept s = kept.get(rnd.nextInt(kept.size()));
                guarded(s, () -> {
                    int len = s.seq.length();
                    if (len > 0) {
                        int from = rnd.nextInt(len);
                        int to = from + 1 + rnd.nextInt(Math.min(len - from, LEASE_CHUNK_BLOCKS * blockTokens));
                        verify(s.seq, s.doc, from, to);
                    }
                    leases.increment();
                });
            } else if (r < 90) {
                Kept s = kept.get(rnd.nextInt(kept.size()));
                guarded(s, () -> {
                    try (Sequence f = s.seq.fork()) {
                        extend(f, s.doc, rnd.nextInt(2 * blockTokens));
                        verify(f, s.doc, 0, f.length());
                        verify(s.seq, s.doc, Math.max(0, s.seq.length() - blockTokens), s.seq.length());
                    }
                    forks.increment();
                });
            } else {
                Kept s = kept.remove(rnd.nextInt(kept.size()));
                s.seq.close();
                closes.increment();
            }
        }

        /** Runs an operation on a kept sequence; on back-pressure the sequence is closed and dropped. */
        private void guarded(Kept s, Runnable op) {
            boolean ok = false;
            try {
                op.run();
                ok = true;
            } finally {
                if (!ok) {
                    kept.remove(s);
                    s.seq.close();
                }
            }
        }

        private void request() {
            int doc = document();
            int length = blockTokens * rnd.nextInt(maxBlocks) + 1 + rnd.nextInt(blockTokens);
            int[] prompt = new int[length];
            for (int i = 0; i < length; i++) {
                prompt[i] = token(doc, i);
            }
            Sequence s = kv.openSequence(SequenceOptions.defaults());
            boolean keep = false;
            try {
                int matched = s.matchPrefix(prompt);
                matchedTokens.add(matched);
                if (matched > 0) {
                    verify(s, doc, 0, matched); // matched blocks first: possibly recovered disk records
                }
                extend(s, doc, length - matched);
                verify(s, doc, 0, length);
                if (rnd.nextInt(4) == 0) {
                    try (Sequence f = s.fork()) {
                        extend(f, doc, 1 + rnd.nextInt(blockTokens));
                        verify(f, doc, Math.max(0, length - blockTokens), f.length());
                    }
                    forks.increment();
                }
                requests.increment();
                if (kept.size() < MAX_KEPT && rnd.nextBoolean()) {
                    kept.add(new Kept(s, doc));
                    keep = true;
                }
            } finally {
                if (!keep) {
                    s.close();
                }
            }
        }

        /** Appends the document's next {@code n} tokens and writes every layer's K and V for each. */
        private void extend(Sequence s, int doc, int n) {
            int words = layout.tokenVectorBytes() / 8;
            for (int i = 0; i < n; i++) {
                int pos = s.appendToken(token(doc, s.length()));
                for (int layer = 0; layer < layout.layers(); layer++) {
                    for (int w = 0; w < words; w++) {
                        k.setAtIndex(WORD, w, word(doc, pos, layer, 0, w));
                        v.setAtIndex(WORD, w, word(doc, pos, layer, 1, w));
                    }
                    s.write(layer, pos, k, v);
                }
            }
        }

        /** Verifies token ids and every byte of positions {@code [from, to)} through leases of a few blocks. */
        private void verify(Sequence s, int doc, int from, int to) {
            int b = blockTokens;
            int words = layout.tokenVectorBytes() / 8;
            int pos = from;
            while (pos < to) {
                int chunkEnd = Math.min(to, (pos / b + LEASE_CHUNK_BLOCKS) * b);
                try (BlockLease lease = s.lease(pos, chunkEnd)) {
                    for (; pos < chunkEnd; pos++) {
                        if (s.tokenAt(pos) != token(doc, pos)) {
                            mismatch("doc " + doc + " position " + pos + ": token id " + s.tokenAt(pos)
                                    + ", expected " + token(doc, pos));
                        }
                        MemorySegment blk = lease.block(pos / b - lease.firstBlockIndex());
                        int offset = pos % b;
                        for (int layer = 0; layer < layout.layers(); layer++) {
                            for (int kvIndex = 0; kvIndex < 2; kvIndex++) {
                                long base = layout.offsetOf(layer, kvIndex == 0 ? KvLayout.K : KvLayout.V, offset);
                                for (int w = 0; w < words; w++) {
                                    long got = blk.get(WORD, base + 8L * w);
                                    long want = word(doc, pos, layer, kvIndex, w);
                                    if (got != want) {
                                        mismatch(String.format(Locale.ROOT, "doc %d position %d layer %d %s word %d:"
                                                + " %016x, expected %016x (block id %d)", doc, pos, layer,
                                                kvIndex == 0 ? "K" : "V", w, got, want,
                                                lease.blockId(pos / b - lease.firstBlockIndex())));
                                        break;
                                    }
                                }
                            }
                        }
                        verifiedBytes.add(2L * layout.layers() * layout.tokenVectorBytes());
                    }
                }
            }
        }

        private void mismatch(String what) {
            mismatches.increment();
            if (mismatchSamples.size() < 5) {
                mismatchSamples.add(what);
            }
        }
    }

    /** A sequence a worker keeps open between operations, with its document. */
    private record Kept(Sequence seq, int doc) {
    }
}
