package io.tierkv.bench.cli;

import io.tierkv.tiers.TierStats;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one {@code tierkv soak} counted: the workers' operations and events, the faults they saw,
 * the totals of every manager closed so far (one per restart) and the invariant checks.
 *
 * <p>Thread-safety: the {@link LongAdder}s, the queues and {@link #peakDiskBytes} are written by
 * the workers and the movers' error handler concurrently; the plain fields ({@link #addClosed},
 * the invariant counts, {@link #restarts}) only by the soak's main thread, which reads everything
 * once the workers have stopped.
 */
final class SoakTally {

    /** Samples of mismatches and of invariant violations kept for the summary. */
    static final int SAMPLES = 5;

    /** Completed request operations. */
    final LongAdder requests = new LongAdder();
    /** Completed append operations. */
    final LongAdder appends = new LongAdder();
    /** Completed lease operations. */
    final LongAdder leases = new LongAdder();
    /** Forks (their own operation, or within a request). */
    final LongAdder forks = new LongAdder();
    /** Close operations. */
    final LongAdder closes = new LongAdder();
    /** Tokens that {@code matchPrefix} matched. */
    final LongAdder matchedTokens = new LongAdder();
    /** Operations ended by back-pressure (no device room in time). */
    final LongAdder backPressure = new LongAdder();
    /** Leases or reads that failed with {@code CorruptBlockException} (a block lost below). */
    final LongAdder lostBelow = new LongAdder();
    /** Bytes of K and V compared with the document's. */
    final LongAdder verifiedBytes = new LongAdder();
    /** Token ids or words read back that differ from the document's. */
    final LongAdder mismatches = new LongAdder();
    /** Back-pressure errors the movers reported. */
    final LongAdder moverBackPressure = new LongAdder();
    /** The first {@value #SAMPLES} mismatches, described. */
    final ConcurrentLinkedQueue<String> mismatchSamples = new ConcurrentLinkedQueue<>();
    /** Exceptions no check expects, from the workers and the movers. */
    final ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
    /** The highest {@code DiskStats.usedBytes} sampled, bytes. */
    final AtomicLong peakDiskBytes = new AtomicLong();

    /** Bytes then blocks of demotions, promotions, disk spills and disk loads of the closed managers. */
    final long[] moved = new long[8];
    /** Prefix hit blocks of the closed managers. */
    long prefixHits;
    /** Prefix hit blocks found below the device. */
    long prefixHitsBelow;
    /** Disk records adopted by hash. */
    long diskAdoptions;
    /** Blocks the disk tier recovered at the opens after restarts. */
    long recoveredBlocks;
    /** Disk misses. */
    long diskMisses;
    /** Disk records found damaged ({@code DiskStats.corruptMisses}). */
    long corruptMisses;
    /** Damaged regions recovery skipped at opens. */
    long recoveryFaults;
    /** Referenced blocks whose only copy was found damaged ({@code CacheStats.lostBlocks}). */
    long lostBlocks;
    /** Invariant checks run. */
    long invariantChecks;
    /** Checks that found a violation. */
    long invariantViolations;
    /** The first {@value #SAMPLES} violations, described. */
    final List<String> violationSamples = new ArrayList<>();
    /** Restarts of the manager. */
    int restarts;

    /** Creates an empty tally. */
    SoakTally() {
    }

    /**
     * Counts a mismatch and keeps its description among the first few.
     *
     * @param what where and what differed
     */
    void mismatch(String what) {
        mismatches.increment();
        if (mismatchSamples.size() < SAMPLES) {
            mismatchSamples.add(what);
        }
    }

    /**
     * Adds the stats of a manager about to be closed to the totals.
     *
     * @param st its stats
     */
    void addClosed(TierStats st) {
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
    }

    /**
     * Counts the verdict of one invariant check ({@link SoakChecks#invariants}).
     *
     * @param violated whether it found a violation
     */
    void countCheck(boolean violated) {
        invariantChecks++;
        if (violated) {
            invariantViolations++;
        }
    }

    /**
     * Operations completed by every worker.
     *
     * @return requests + appends + leases + forks + closes
     */
    long operations() {
        return requests.sum() + appends.sum() + leases.sum() + forks.sum() + closes.sum();
    }
}
