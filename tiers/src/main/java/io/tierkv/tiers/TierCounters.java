package io.tierkv.tiers;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * The tier manager's counters: moves per direction with bytes and latency histograms, and event
 * counts. Thread-safe: adders and HdrHistogram {@link Recorder}s take concurrent writers.
 */
final class TierCounters {

    /** Blocks, bytes and latency of one kind of move; each move is also a JFR event. */
    static final class Move {
        private final String direction;
        final LongAdder blocks = new LongAdder();
        final LongAdder bytes = new LongAdder();
        private final Recorder latency = new Recorder(3);
        @GuardedBy("this")
        private final Histogram total = new Histogram(3);

        Move(String direction) {
            this.direction = direction;
        }

        void record(int blockId, long movedBytes, long nanos) {
            TierEvents.move(direction, blockId, movedBytes);
            blocks.increment();
            bytes.add(movedBytes);
            latency.recordValue(Math.max(0, nanos));
        }

        synchronized Histogram histogram() {
            total.add(latency.getIntervalHistogram());
            return total.copy();
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
