package io.tierkv.tiers;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * The tier manager's counters: moves per direction with bytes and latency histograms, and event
 * counts. Thread-safe: adders take concurrent writers; each {@link Move} is its own monitor.
 */
final class TierCounters {

    /**
     * Blocks, bytes and latency of one kind of move, recorded and read together under this
     * object's monitor; each move is also a JFR event. One uncontended monitor and a plain
     * histogram cost a move two atomic operations, where two adders and a concurrent
     * {@code Recorder} cost about seven (issue 13: a 64 KiB promotion's fixed work).
     *
     * <p>Demotions and promotions (host or disk to the device), of which a 64 KiB one takes 1-4 us,
     * time one move in {@link #SAMPLE_EVERY} ({@link #startTimer}): two clock reads cost about
     * 70 ns on these VMs, 4-5 % of a 64 KiB promotion. Their blocks and bytes count every move;
     * their latency percentiles are those of the sampled moves. Every other direction times each
     * move. Promotions are counted by the cache, in its commit under the manager lock ({@link
     * io.tierkv.core.cache.CacheStats#promotions}), so their object here keeps only the sampled
     * latency ({@link #recordSampledLatency}): no second count, and no monitor for the seven
     * promotions in eight not timed (about 28 ns of a 64 KiB promotion's 180 ns of fixed work).
     */
    static final class Move {
        /** A device move times one move in this many. */
        static final int SAMPLE_EVERY = 8;
        /** What {@link #startTimer} returns for a move it does not time. */
        static final long UNTIMED = Long.MIN_VALUE;

        private final String direction;
        @GuardedBy("this") private long blocks;
        @GuardedBy("this") private long bytes;
        @GuardedBy("this") private final Histogram latency = new Histogram(3);
        /** Moves started, for {@link #startTimer}'s sample; racy on purpose (a lost update only shifts the sample). */
        private int started;

        Move(String direction) {
            this.direction = direction;
        }

        /**
         * Starts timing a sampled move: reads the clock for one move in {@link #SAMPLE_EVERY}.
         *
         * @return {@link System#nanoTime()}, or {@link #UNTIMED} for a move not timed
         */
        long startTimer() {
            return (started++ & (SAMPLE_EVERY - 1)) == 0 ? System.nanoTime() : UNTIMED;
        }

        /**
         * Starts timing a sampled move that began at {@code beganNanos} (read by whoever started
         * it), for one move in {@link #SAMPLE_EVERY}.
         *
         * @param beganNanos {@link System#nanoTime()} when the move began
         * @return {@code beganNanos}, or {@link #UNTIMED} for a move not timed
         */
        long startTimerAt(long beganNanos) {
            return (started++ & (SAMPLE_EVERY - 1)) == 0 ? beganNanos : UNTIMED;
        }

        /**
         * Records a move started with {@link #startTimer}: counted always, timed if it was sampled.
         *
         * @param blockId    the block, for the JFR event
         * @param movedBytes bytes moved
         * @param startNanos what {@link #startTimer} returned
         */
        void recordSampled(int blockId, long movedBytes, long startNanos) {
            boolean timed = startNanos != UNTIMED;
            add(blockId, movedBytes, timed, timed ? System.nanoTime() - startNanos : 0);
        }

        /**
         * Records a move that the cache counts itself (a promotion): its JFR event and, if it was
         * sampled, its latency; its blocks and bytes are not counted here.
         *
         * @param blockId    the block, for the JFR event
         * @param movedBytes bytes moved, for the JFR event
         * @param startNanos what {@link #startTimer} returned
         */
        void recordSampledLatency(int blockId, long movedBytes, long startNanos) {
            TierEvents.move(direction, blockId, movedBytes);
            if (startNanos != UNTIMED) {
                long nanos = System.nanoTime() - startNanos;
                synchronized (this) {
                    latency.recordValue(Math.max(0, nanos));
                }
            }
        }

        /** Records a move of a direction that times every move, {@code nanos} long. */
        void record(int blockId, long movedBytes, long nanos) {
            add(blockId, movedBytes, true, nanos);
        }

        private void add(int blockId, long movedBytes, boolean timed, long nanos) {
            TierEvents.move(direction, blockId, movedBytes);
            synchronized (this) {
                blocks++;
                bytes += movedBytes;
                if (timed) {
                    latency.recordValue(Math.max(0, nanos));
                }
            }
        }

        /**
         * {@return the cache's count of these moves, their bytes, and this object's latency
         * percentiles} For a direction recorded with {@link #recordSampledLatency}.
         *
         * @param countedBlocks the moves, as the cache counts them
         * @param bytesPerBlock bytes per move (whole blocks)
         */
        synchronized TierStats.MoveStats snapshot(long countedBlocks, long bytesPerBlock) {
            return new TierStats.MoveStats(countedBlocks, countedBlocks * bytesPerBlock,
                    latency.getValueAtPercentile(50), latency.getValueAtPercentile(99));
        }

        /** {@return blocks, bytes and latency percentiles, read together} */
        synchronized TierStats.MoveStats snapshot() {
            return new TierStats.MoveStats(blocks, bytes, latency.getValueAtPercentile(50),
                    latency.getValueAtPercentile(99));
        }
    }

    final Move demotions = new Move("DEVICE->HOST");
    final Move promotions = new Move("HOST->DEVICE");
    final Move diskSpills = new Move("HOST->DISK");
    final Move diskLoads = new Move("DISK->DEVICE");
    final Move diskToHost = new Move("DISK->HOST");
    final Move hostReads = new Move("HOST->CALLER");
    final Move diskReads = new Move("DISK->CALLER");
    final LongAdder diskMisses = new LongAdder();
    final LongAdder diskSpillFailures = new LongAdder();
    final LongAdder diskAdoptions = new LongAdder();
    final LongAdder hostCleanDrops = new LongAdder();
    final LongAdder hostEvictions = new LongAdder();
    final LongAdder moverErrors = new LongAdder();
}
