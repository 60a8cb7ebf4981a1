package io.tierkv.tiers;

import io.tierkv.core.cache.BelowChanges;
import io.tierkv.core.cache.DiskRecords;
import io.tierkv.core.cache.LowerTier;
import io.tierkv.core.cache.RemoteRecords;
import java.lang.foreign.MemorySegment;
import java.util.function.IntConsumer;

/**
 * A lower tier that delegates to a host tier and runs a test's hook once at the point a race
 * needs: right after a demotion's, a promotion's or a load's copy landed, while the move holds the
 * block and the cache lock is released (what a mover or another worker may do at that moment),
 * as a spill starts (its source held, the lock released), or as a promotion is planned or an id
 * forgotten, with the lock held.
 */
final class HookedLower implements LowerTier {

    private final HostTier host;
    /** Run once, right after a demotion's copy landed below, with the cache lock released; then cleared. */
    Runnable afterDemote;
    /**
     * Run once, right after a promotion's copy landed on the device, with the cache lock released
     * (a promotion from disk still holds its staging buffer); then cleared.
     */
    Runnable afterPromote;
    /** Run once as a promotion is planned, with the cache lock held, before the host tier's plan; then cleared. */
    Runnable beforePrepare;
    /** Run once as a spill starts, its source planned and the cache lock released, before the disk write; then cleared. */
    Runnable beforeSpill;
    /** Run once, right after a load's copy landed in a host slot, with the cache lock released; then cleared. */
    Runnable afterLoad;
    /** Run once as the disk store is asked to adopt a record for a match, with the cache lock held; then cleared. */
    Runnable beforeAdopt;
    /** Run once as a promotion from disk reads the record into a staging buffer, the cache lock released; then cleared. */
    Runnable beforeStage;
    /** Run once, right after the host tier forgot an id the cache frees, with the cache lock held; then cleared. */
    IntConsumer afterForget;
    /**
     * Set, on a tier built by {@link #fetching}: a match that missed locally finds the rest of its
     * chain in the remote store ({@link #remoteRecords}), and its next fetch runs this (on the
     * matching thread, the cache lock released, the host slots reserved) instead of reading
     * anything, then says all it was asked for came; then cleared. Unset, the store holds nothing.
     */
    Runnable duringFetch;
    /**
     * Called for every block offered to the remote store of a tier built by {@link #fetching}, on
     * the offering thread; the offer is taken if set. Not cleared.
     */
    volatile OfferHook onOffer;
    /** Whether the remote store of a tier built by {@link #fetching} writes through: every demoted block is offered. */
    volatile boolean writesThrough;
    /** Whether the cache sees a remote store below ({@link #fetching}); read once, when the cache is built. */
    private final boolean fetches;

    /** The host tier's disk store with {@link #beforeSpill} before each write and {@link #afterLoad} after each load; null without a disk. */
    private final DiskRecords hookedDisk;

    /** @param host the host tier every call goes to */
    HookedLower(HostTier host) {
        this(host, false);
    }

    private HookedLower(HostTier host, boolean fetches) {
        this.host = host;
        this.fetches = fetches;
        this.hookedDisk = hooked(host.diskRecords());
    }

    /**
     * {@return a hooked tier over {@code host} with a remote store below whose lookup and fetch
     * {@link #duringFetch} stands in for}
     *
     * @param host the host tier every call goes to
     */
    static HookedLower fetching(HostTier host) {
        return new HookedLower(host, true);
    }

    @Override
    public void attach(io.tierkv.core.cache.BlockOwner owner) {
        host.attach(owner);
    }

    @Override
    public io.tierkv.core.cache.HostSlots hostSlots() {
        return host.hostSlots();
    }

    /** The host tier's disk store, its writes and loads hooked ({@link #beforeSpill}, {@link #afterLoad}); null without a disk. */
    @Override
    public DiskRecords diskRecords() {
        return hookedDisk;
    }

    private DiskRecords hooked(DiskRecords disk) {
        return disk == null ? null : new DiskRecords() {
            @Override
            public long write(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment block,
                    boolean pin) {
                Runnable hook = beforeSpill;
                beforeSpill = null;
                runIf(true, hook);
                return disk.write(blockId, hashHi, hashLo, identity, block, pin);
            }

            @Override
            public int load(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment out) {
                int result = disk.load(blockId, hashHi, hashLo, identity, out);
                Runnable hook = afterLoad;
                afterLoad = null;
                runIf(result == LOADED, hook);
                return result;
            }

            @Override
            public int stage(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment out) {
                Runnable hook = beforeStage;
                beforeStage = null;
                runIf(true, hook);
                return disk.stage(blockId, hashHi, hashLo, identity, out);
            }

            @Override
            public int read(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment out) {
                return disk.read(blockId, hashHi, hashLo, identity, out);
            }

            @Override
            public int adopt(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment into) {
                Runnable hook = beforeAdopt;
                beforeAdopt = null;
                runIf(true, hook);
                return disk.adopt(blockId, hashHi, hashLo, identity, into);
            }

            @Override
            public boolean verifiesOnAdopt() {
                return disk.verifiesOnAdopt();
            }

            @Override
            public boolean contains(long hashHi, long hashLo) {
                return disk.contains(hashHi, hashLo);
            }

            @Override
            public long pin(long hashHi, long hashLo) {
                return disk.pin(hashHi, hashLo);
            }

            @Override
            public boolean unpin(long hashHi, long hashLo, long pin) {
                return disk.unpin(hashHi, hashLo, pin);
            }

            @Override
            public boolean pinBroken(long pin) {
                return disk.pinBroken(pin);
            }

            @Override
            public String checkPins(long[] hashHi, long[] hashLo, long[] pins, int[] holders, int n) {
                return disk.checkPins(hashHi, hashLo, pins, holders, n);
            }

            @Override
            public void setDepartures(Departures departures) {
                disk.setDepartures(departures);
            }
        };
    }

    @Override
    public boolean demote(int blockId, long hashHi, long hashLo, MemorySegment identity, int slot, int hostSlot) {
        boolean ok = host.demote(blockId, hashHi, hashLo, identity, slot, hostSlot);
        Runnable hook = afterDemote;
        afterDemote = null;
        runIf(ok, hook);
        return ok;
    }

    @Override
    public int preparePromote(int blockId) {
        Runnable hook = beforePrepare;
        beforePrepare = null;
        runIf(true, hook);
        return host.preparePromote(blockId);
    }

    @Override
    public void completePromote(int blockId, int source, int result) {
        host.completePromote(blockId, source, result);
    }

    @Override
    public int promote(int blockId, int source, int slot, long timeoutNanos) {
        int result = host.promote(blockId, source, slot, timeoutNanos);
        Runnable hook = afterPromote;
        afterPromote = null;
        runIf(result == PROMOTED, hook);
        return result;
    }

    @Override
    public int promoteStaged(int blockId, int buffer, int slot, long startNanos) {
        int result = host.promoteStaged(blockId, buffer, slot, startNanos);
        Runnable hook = afterPromote;
        afterPromote = null;
        runIf(result == PROMOTED, hook);
        return result;
    }

    @Override
    public boolean read(int blockId, MemorySegment out) {
        return host.read(blockId, out);
    }

    @Override
    public void releaseLateSlots(IntConsumer sink) {
        host.releaseLateSlots(sink);
    }

    @Override
    public void forget(int blockId) {
        host.forget(blockId);
        IntConsumer hook = afterForget;
        afterForget = null;
        if (hook != null) {
            hook.accept(blockId);
        }
    }

    @Override
    public void drainChanges(BelowChanges out) {
        host.drainChanges(out);
    }

    @Override
    public boolean hasChanges() {
        return host.hasChanges();
    }

    /**
     * {@inheritDoc} Built by {@link #fetching}: a remote store whose lookup and fetch {@link
     * #duringFetch} stands in for, and which takes an offer only while {@link #onOffer} is set.
     * Else none.
     */
    @Override
    public RemoteRecords remoteRecords() {
        if (!fetches) {
            return null;
        }
        return new RemoteRecords() {
            @Override
            public int lookup(long[] hashHi, long[] hashLo, int count, long startNanos) {
                return duringFetch != null ? count : 0;
            }

            @Override
            public int fetch(long[] hashHi, long[] hashLo, MemorySegment[] identities, MemorySegment[] dsts,
                    int count, long startNanos) {
                Runnable hook = duringFetch;
                duringFetch = null;
                if (hook == null) {
                    return 0;
                }
                hook.run();
                return count;
            }

            @Override
            public boolean offer(long hashHi, long hashLo, MemorySegment identity, MemorySegment block) {
                OfferHook hook = onOffer;
                if (hook == null) {
                    return false;
                }
                hook.offered(hashHi, hashLo, identity, block);
                return true;
            }

            @Override
            public boolean writesThrough() {
                return writesThrough;
            }

            @Override
            public void countAdopted() {
            }
        };
    }

    /** What {@link #onOffer} is told: a block offered to the remote store, valid during the call. */
    @FunctionalInterface
    interface OfferHook {
        void offered(long hashHi, long hashLo, MemorySegment identity, MemorySegment block);
    }

    /** Runs a hook, already taken from its field, if the copy it waits for landed. */
    private static void runIf(boolean landed, Runnable hook) {
        if (landed && hook != null) {
            hook.run();
        }
    }
}
