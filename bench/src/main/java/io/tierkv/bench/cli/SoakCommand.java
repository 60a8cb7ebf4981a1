package io.tierkv.bench.cli;

import io.tierkv.observe.Observation;
import io.tierkv.observe.ObserveOptions;
import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.CacheStats;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.store.DiskFaultInjection;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
 *   <li><b>invariant violations</b>: {@code kv.checkInvariants()} runs every second (and at the end),
 *       one atomic snapshot of the block model and the tiers below it (a move in flight shows as in
 *       transit on both sides); any violation counts, with no re-check;
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
 *
 * <p>Classes by job: this one holds the options and drives the run (the main thread's invariant
 * checks, disk samples and restarts); {@link SoakWorker} is the random workload of one thread,
 * {@link SoakDocument} what a document's tokens and bytes are, written and verified;
 * {@link SoakManager} the manager's lifecycle across restarts; {@link SoakChecks} the invariant,
 * leak and file-descriptor checks; {@link SoakTally} the counts; {@link SoakReport} the summary,
 * the faults and the exit status. The manager options ({@code --compression},
 * {@code --recent-blocks}, {@code --movers}) come from {@link ManagerOptions}.
 */
@Command(name = "soak", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Soak a KV block manager: random append, fork, match, lease, close and disk-tier restarts "
                + "with budgets far below the working set; every byte read is verified.",
            "Exit status: 0, or 1 on a mismatch, a leaked block, an invariant violation, an injected corruption "
                    + "not detected, a block lost below with no detected corruption to explain it, file descriptor "
                    + "growth, disk use above its budget, or an unexpected exception."})
public final class SoakCommand implements Callable<Integer> {

    /**
     * The most worker threads: 1024, platform threads each with its own stack. It is far above the
     * cores the soak contends for (2,000 threads still pass a 3 s soak), while 100,000 spent minutes
     * starting threads and never reached the summary.
     */
    static final int MAX_THREADS = 1024;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Option(names = "--duration", paramLabel = "TIME", defaultValue = "60s",
            description = "how long to run: 500ms, 60s, 10m, 1h (default: ${DEFAULT-VALUE})")
    private String duration;

    @Option(names = "--threads", paramLabel = "T", defaultValue = "4",
            description = "worker threads, 1 to " + MAX_THREADS + " (default: ${DEFAULT-VALUE})")
    private int threads;

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

    @CommandLine.Mixin
    private ManagerOptions manager;

    @CommandLine.Mixin
    private ObserveOptions observe;

    @Option(names = "--restart-every", paramLabel = "TIME", defaultValue = "10s",
            description = "close the manager and reopen it over the same (persistent) disk directory this often; "
                    + "0 = never (default: ${DEFAULT-VALUE})")
    private String restartEvery;

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
        int fdStart = SoakChecks.openFds();
        KvLayout layout = KvLayout.of(2, 2, 4, DType.F32, blockTokens);
        long diskBudget = Sizes.parseBytes(diskBytes);
        try { // the budget, before any temporary directory exists
            Replayer.diskOptions(Path.of("disk"), layout, diskBudget, manager.compression()).withPersistent(true)
                    .checkFor(layout);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage().startsWith("--") ? e.getMessage()
                    : "--disk-bytes " + diskBytes + ": " + e.getMessage()); // as typed
        }
        Interrupts.cooperate();
        Path temp = null;
        Path dir = diskDir;
        if (dir == null) {
            temp = Interrupts.createTempDirectory("tierkv-soak-");
            dir = temp.resolve("disk");
        }
        DiskOptions diskOptions = Replayer.diskOptions(dir, layout, diskBudget, manager.compression())
                .withPersistent(true);
        long workingBlocks = (long) documents * maxBlocks;

        SoakTally tally = new SoakTally();
        Observation observation = observe.open();
        SoakManager kv = new SoakManager(layout, diskOptions, deviceBlocks, hostBlocks, manager,
                admissionTimeoutMs * 1_000_000L, tally, observation);
        AtomicBoolean stop = new AtomicBoolean();
        List<SoakWorker> workers = new ArrayList<>();
        List<Thread> workerThreads = new ArrayList<>();
        long leaked;
        CacheStats endCache;
        DiskFaultInjection injection = corruptRate > 0 ? DiskFaultInjection.install(corruptRate, seed) : null;
        long t0 = System.nanoTime();
        try {
            kv.open(); // the machine's limits are checked here: nothing is printed before
            printHeader(out, restartNanos, layout, diskBudget, diskOptions, dir, workingBlocks);
            for (int w = 0; w < threads; w++) {
                SoakWorker worker = new SoakWorker(kv, layout, documents, maxBlocks, tally, stop,
                        seed * 1_000_003L + w);
                workers.add(worker);
                workerThreads.add(Thread.ofPlatform().name("soak-worker-" + w).start(worker));
            }
            drive(kv, tally, stop, workers, t0, durationNanos, restartNanos);
            stop.set(true);
            for (Thread t : workerThreads) {
                t.join(60_000);
                if (t.isAlive()) {
                    tally.unexpected.add(new IllegalStateException(t.getName() + " did not stop within 60 s"));
                }
            }
            for (SoakWorker w : workers) {
                w.closeKept();
            }
            KvBlockManager last = kv.current();
            endCache = last.stats().cache();
            leaked = SoakChecks.leakedBlocks(endCache);
            SoakChecks.invariants(kv, tally, t0);
            kv.sampleDisk();
        } finally {
            stop.set(true);
            kv.close();
            observation.close();
            if (injection != null) {
                injection.uninstall();
            }
            Interrupts.deleteTempDirectory(temp);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        int fdEnd = SoakChecks.openFds();
        return new SoakReport(tally, seconds, duration, Interrupts.requested(), corruptRate,
                injection == null ? 0 : injection.injected(), leaked, endCache, fdStart, fdEnd, fdTolerance,
                diskBudget).print(out);
    }

    /** The four lines that describe the run, printed once its manager has opened. */
    private void printHeader(PrintWriter out, long restartNanos, KvLayout layout, long diskBudget,
            DiskOptions diskOptions, Path dir, long workingBlocks) {
        long block = layout.bytesPerBlock();
        out.printf(Locale.ROOT, "tierkv soak: %s, %d threads, %d movers, seed %d, restart every %s%n", duration,
                threads, manager.movers(), seed, restartNanos == 0 ? "never" : restartEvery);
        out.printf(Locale.ROOT, "layout: %d layers x %d KV heads x dim %d %s, %d tokens/block (%s/block)%n",
                layout.layers(), layout.kvHeads(), layout.headDim(), layout.dtype(), blockTokens, Sizes.bytes(block));
        out.printf(Locale.ROOT, "budgets: device %d blocks (%s), host %d blocks (%s), disk %s (%s segments) in %s%n",
                deviceBlocks, Sizes.bytes(deviceBlocks * block), hostBlocks, Sizes.bytes(hostBlocks * block),
                Sizes.bytes(diskBudget), Sizes.bytes(diskOptions.segmentBytes()), dir);
        out.printf(Locale.ROOT, "working set: %d documents x %d blocks = %d blocks (%s)%n", documents, maxBlocks,
                workingBlocks, Sizes.bytes(workingBlocks * block));
        out.flush();
    }

    /**
     * The main thread's part while the workers run: until the duration is over, a worker failed
     * or an interrupt came, samples the disk every 100 ms, checks the invariants every second and
     * restarts the manager every {@code restartNanos} (not in the last half second).
     */
    private static void drive(SoakManager kv, SoakTally tally, AtomicBoolean stop, List<SoakWorker> workers, long t0,
            long durationNanos, long restartNanos) throws InterruptedException {
        long end = t0 + durationNanos;
        long nextCheck = t0 + 1_000_000_000L;
        long nextRestart = restartNanos == 0 ? Long.MAX_VALUE : t0 + restartNanos;
        while (!stop.get() && !Interrupts.requested()) {
            long now = System.nanoTime();
            if (now >= end) {
                break;
            }
            if (!tally.unexpected.isEmpty()) {
                break;
            }
            Thread.sleep(Math.max(1, Math.min(100, (end - now) / 1_000_000)));
            kv.sampleDisk();
            now = System.nanoTime();
            if (now >= nextCheck) {
                nextCheck = now + 1_000_000_000L;
                SoakChecks.invariants(kv, tally, t0);
            }
            if (now >= nextRestart && now + 500_000_000L < end) {
                kv.restart(workers);
                tally.restarts++;
                nextRestart = System.nanoTime() + restartNanos;
            }
        }
    }

    private void validate() {
        Check.between("--threads", threads, 1, MAX_THREADS, "platform threads");
        manager.check();
        observe.check();
        Check.atLeast("--block-tokens", blockTokens, 1);
        Check.atLeast("--documents", documents, 1);
        Check.atLeast("--max-blocks", maxBlocks, 1);
        Check.atLeast("--device-blocks", deviceBlocks, 2);
        Check.atLeast("--host-blocks", hostBlocks, 1);
        Check.atLeast("--admission-timeout-ms", admissionTimeoutMs, 0);
        Check.atLeast("--fd-tolerance", fdTolerance, 0);
        Check.between("--corrupt-rate", corruptRate, 0, 1);
        if ((long) maxBlocks * blockTokens > 1_000_000) {
            throw new IllegalArgumentException("--max-blocks " + maxBlocks + " x --block-tokens " + blockTokens + ": "
                    + (long) maxBlocks * blockTokens + " tokens per document (expected <= 1000000)");
        }
        Check.bytes("--disk-bytes", diskBytes);
        if (diskDir != null) {
            Check.outputDirectory("--disk-dir", diskDir);
        }
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
}
