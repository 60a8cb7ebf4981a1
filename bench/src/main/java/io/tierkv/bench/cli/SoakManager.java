package io.tierkv.bench.cli;

import io.tierkv.observe.Observation;
import io.tierkv.core.KvLayout;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.error.TransferTimeoutException;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.DiskStats;
import java.util.List;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The manager under soak across restarts: builds it (emulated device, host, persistent disk tier
 * over one directory), closes it (adding its stats to the {@link SoakTally}) and rebuilds it over
 * the same directory, and samples the disk's use.
 *
 * <p>Thread-safety: workers run each operation under {@link #gate()}'s read lock and read
 * {@link #current()} inside it; {@link #restart} takes the write lock, so it happens between
 * operations. {@link #open()} and {@link #close()} run on the soak's main thread (under the write
 * lock, or before the workers start and after they stop). {@link #sampleDisk()} may race a
 * restart and then samples nothing.
 */
final class SoakManager {

    private final KvLayout layout;
    private final DiskOptions diskOptions;
    private final int deviceBlocks;
    private final int hostBlocks;
    private final ManagerOptions options;
    private final long admissionTimeoutNanos;
    private final SoakTally tally;
    private final Observation observation;
    private final ReentrantReadWriteLock gate = new ReentrantReadWriteLock(true);
    private volatile KvBlockManager kv;
    private EmulatedDevice device;
    private int generation;

    /**
     * Describes the manager; nothing is built until {@link #open()}.
     *
     * @param layout                the block layout
     * @param diskOptions           the disk tier, persistent
     * @param deviceBlocks          device budget, blocks
     * @param hostBlocks            host budget, blocks
     * @param options               recent blocks and movers (the disk's codec is in {@code diskOptions})
     * @param admissionTimeoutNanos how long an allocation waits for device room, nanoseconds
     * @param tally                 receives the stats of each closed manager and the movers' errors
     * @param observation           the KV event publisher and metrics endpoint every manager reports to
     */
    SoakManager(KvLayout layout, DiskOptions diskOptions, int deviceBlocks, int hostBlocks, ManagerOptions options,
            long admissionTimeoutNanos, SoakTally tally, Observation observation) {
        this.observation = observation;
        this.layout = layout;
        this.diskOptions = diskOptions;
        this.deviceBlocks = deviceBlocks;
        this.hostBlocks = hostBlocks;
        this.options = options;
        this.admissionTimeoutNanos = admissionTimeoutNanos;
        this.tally = tally;
    }

    /**
     * The lock workers hold (read) around each operation and a restart holds (write).
     *
     * @return the fair lock
     */
    ReentrantReadWriteLock gate() {
        return gate;
    }

    /**
     * The open manager.
     *
     * @return it, or null while closed
     */
    KvBlockManager current() {
        return kv;
    }

    /**
     * How many managers were opened, this one included.
     *
     * @return 1 for the first, + 1 per restart
     */
    int generation() {
        return generation;
    }

    /** Builds a manager over the disk directory; counts what its disk tier recovered. */
    void open() {
        long block = layout.bytesPerBlock();
        EmulatedDevice dev = new EmulatedDevice((deviceBlocks + 1L) * block);
        try {
            kv = observation.configure(KvBlockManager.builder(layout))
                    .device(dev, deviceBlocks * block)
                    .host(hostBlocks * block)
                    .disk(diskOptions)
                    .recentDeviceBlocks(options.recentBlocks())
                    .movers(options.movers())
                    .admissionTimeoutNanos(admissionTimeoutNanos)
                    .errorHandler(this::moverError)
                    .build();
        } catch (RuntimeException e) {
            dev.close();
            throw e;
        }
        device = dev;
        observation.attach(kv);
        generation++;
        DiskStats ds = kv.stats().disk();
        if (ds != null) {
            tally.recoveredBlocks += ds.recoveredBlocks();
            tally.recoveryFaults += ds.recoveryFaults();
        }
        sampleDisk();
    }

    private void moverError(Throwable t) {
        if (t instanceof CapacityExhaustedException || t instanceof TransferTimeoutException) {
            tally.moverBackPressure.increment();
        } else {
            tally.unexpected.add(new IllegalStateException("mover error", t));
        }
    }

    /**
     * Closes the open manager and its device and adds the manager's final stats to the tally;
     * nothing if closed. The stats are read after the close, which stops the movers first: read
     * before it, a spill or load that a mover finished in between went uncounted (a corruption the
     * injector made there was detected but missing from the tally: 10,437 injected, 10,436 counted
     * in one CI run of the 30 s corruption soak).
     */
    void close() {
        KvBlockManager k = kv;
        if (k != null) {
            try {
                sampleDisk();
            } finally {
                k.close();
                kv = null;
            }
            tally.addClosed(k.stats());
        }
        if (device != null) {
            device.close();
            device = null;
        }
    }

    /**
     * Stops the workers at an operation boundary, closes their sequences and the manager, reopens.
     *
     * @param workers every worker, to close the sequences they keep
     */
    void restart(List<SoakWorker> workers) {
        gate.writeLock().lock();
        try {
            for (SoakWorker w : workers) {
                w.closeKept();
            }
            close();
            open();
        } finally {
            gate.writeLock().unlock();
        }
    }

    /** Raises the tally's disk peak to the open manager's {@code DiskStats.usedBytes}. */
    void sampleDisk() {
        KvBlockManager k = kv;
        if (k == null) {
            return;
        }
        try {
            DiskStats ds = k.stats().disk();
            if (ds != null) {
                tally.peakDiskBytes.accumulateAndGet(ds.usedBytes(), Math::max);
            }
        } catch (IllegalStateException e) {
            // closed by a restart in between
        }
    }
}
