package io.tierkv.bench.cli;

import io.tierkv.core.cache.CacheStats;
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
     * Block ids leaked: live ids that are neither cached nor held by leases alone (a mover's
     * read-ahead promoting a block ahead of its lease), from one snapshot of the cache
     * ({@link CacheStats#leasedOnlyBlocks}), so a mover mid-move needs no re-read. Call once every
     * sequence is closed and every lease released.
     *
     * @param cs a snapshot of the cache's stats ({@code kv.stats().cache()})
     * @return the block ids still in use that nothing but a leak holds: 0 when nothing leaked
     */
    static long leakedBlocks(CacheStats cs) {
        return (long) cs.liveBlocks() - cs.cachedBlocks() - cs.leasedOnlyBlocks();
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
