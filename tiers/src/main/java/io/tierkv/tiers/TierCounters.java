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
     */
    static final class Move {
        private final String direction;
        @GuardedBy("this") private long blocks;
        @GuardedBy("this") private long bytes;
        @GuardedBy("this") private final Histogram latency = new Histogram(3);

        Move(String direction) {
            this.direction = direction;
        }

        void record(int blockId, long movedBytes, long nanos) {
            TierEvents.move(direction, blockId, movedBytes);
            synchronized (this) {
                blocks++;
                bytes += movedBytes;
                latency.recordValue(Math.max(0, nanos));
            }
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
    final LongAdder hostAllocationFailures = new LongAdder();
    final LongAdder hostCleanDrops = new LongAdder();
    final LongAdder hostEvictions = new LongAdder();
    final LongAdder moverErrors = new LongAdder();
}
