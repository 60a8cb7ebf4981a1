package io.tierkv.bench.cli;

import io.tierkv.core.cache.CacheStats;
import io.tierkv.tiers.KvBlockManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The soak's checks of a running manager: its invariants (one atomic snapshot; a violation is a
 * failure), the blocks leaked once every sequence is closed, and the process's open file
 * descriptors.
 *
 * <p>Thread-safety: called from the soak's main thread; {@link #invariants} holds the manager's
 * read lock, so no restart closes the manager under it.
 */
final class SoakChecks {

    /** How long to wait before each re-read of the leak count, milliseconds. */
    private static final long RECHECK_MILLIS = 50;

    private SoakChecks() {
    }

    /**
     * Runs {@code kv.checkInvariants()}, one atomic snapshot of the block model and the tiers
     * below it: any violation counts.
     *
     * @param manager     the manager under soak
     * @param tally       receives the verdict ({@link SoakTally#countCheck}) and the first violations
     * @param startNanos  {@code System.nanoTime()} at the start of the run, for the sample's time
     */
    static void invariants(SoakManager manager, SoakTally tally, long startNanos) {
        manager.gate().readLock().lock();
        try {
            List<String> bad = manager.current().checkInvariants();
            tally.countCheck(!bad.isEmpty());
            if (!bad.isEmpty() && tally.violationSamples.size() < SoakTally.SAMPLES) {
                tally.violationSamples.add(String.format(Locale.ROOT, "at %.1f s, manager %d: %s",
                        (System.nanoTime() - startNanos) / 1e9, manager.generation(),
                        bad.size() > 3 ? bad.subList(0, 3) + " ..." : bad.toString()));
            }
        } finally {
            manager.gate().readLock().unlock();
        }
    }

    /**
     * Live block ids minus cached blocks ({@code liveBlocks - cachedBlocks} of
     * {@code kv.stats().cache()}), re-read twice {@value #RECHECK_MILLIS} ms apart while a mover
     * may be mid-move; call once every sequence is closed.
     *
     * @param kv the manager
     * @return the blocks still in use that are not cached: 0 when nothing leaked
     * @throws InterruptedException if interrupted while waiting to re-read
     */
    static long leakedBlocks(KvBlockManager kv) throws InterruptedException {
        long leaked = 0;
        for (int i = 0; i < 3; i++) {
            CacheStats cs = kv.stats().cache();
            leaked = (long) cs.liveBlocks() - cs.cachedBlocks();
            if (leaked == 0) {
                return 0;
            }
            Thread.sleep(RECHECK_MILLIS);
        }
        return leaked;
    }

    /**
     * Open file descriptors of this process.
     *
     * @return entries of {@code /proc/self/fd}, or -1 where there is no such directory
     * @throws UncheckedIOException if the directory cannot be listed
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
}
