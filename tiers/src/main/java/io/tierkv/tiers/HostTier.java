package io.tierkv.tiers;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.LowerTier;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.error.TierKvException;
import io.tierkv.core.policy.EvictionPolicies;
import io.tierkv.core.policy.EvictionPolicy;
import io.tierkv.core.pool.SlotAllocator;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.natives.GpuEvent;
import io.tierkv.natives.PinnedHostBuffer;
import io.tierkv.tiers.disk.DiskTier;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntConsumer;

/**
 * Everything below the device: pinned host slots and, optionally, the disk tier under them.
 *
 * <h2>Residency</h2>
 * A block id demoted from the device gets a host slot. Host slots leave by policy order
 * ({@code hostPolicy}): a <em>clean</em> host copy (the device also holds the block, kept after
 * a promotion) is simply dropped; a block with a hash spills to disk, after which it is held by
 * hash alone; a block nobody references is freed through the cache; a referenced block with no
 * disk below stays. Disk records are keyed by block hash, so they outlive block ids and serve
 * later prefix hits ({@link #adopt}).
 *
 * <pre>
 * per block id: hostSlot int (-1 none) | state byte (CLEAN, ON_DISK, MOVING, QUEUED, NEEDED, PINNED)
 *               | hash 2 longs | disk pin long (the record serial its pin names; 0 when not PINNED)
 * per host slot: [bytesPerBlock bytes] in one pinned buffer; its identity off-heap beside it
 *                ({@link BlockIdentity}: context, parent hash, B token ids; copied at demotion)
 * </pre>
 *
 * <h2>Identity</h2>
 * Host slots hold blocks by id, so a host hit is the block's own bytes. Everything that goes to
 * or comes from disk, which holds records by hash, names the identity: a spill writes the host
 * slot's identity with the bytes (and a record of another identity under the key refuses the
 * spill: the block stays here); every disk read (promotion, read, read-ahead, adoption on a
 * match) passes the identity the cache holds for the block and gets bytes only from a record of
 * exactly that identity. A record of another identity is a counted collision and, for a block
 * bound to it, a disk miss: never another block's bytes.
 *
 * <h2>Referenced blocks are never lost below</h2>
 * The cache tells this tier which blocks are referenced ({@link #pinBelow}: NEEDED, until
 * {@link #unpinBelow} or {@link #forget}). A host slot never drops a referenced block without a
 * copy elsewhere (it leaves only by a spill, or as a clean copy of a device-resident block). Its
 * disk record is pinned in the disk tier exactly while the block is NEEDED, ON_DISK and has no
 * host slot (PINNED: this id holds one pin on the record). The pin is taken in the same disk-tier
 * call that writes the record ({@link DiskTier#putPinned} when the NEEDED bit read before the
 * spill is set), so there is no moment at which the record is evictable and already the only
 * copy; if the block became NEEDED during the spill, the record is pinned before the host slot is
 * dropped, and a record gone by then means the spill failed and the block stays on the host. A
 * disk tier that cannot make room without evicting pinned records refuses the spill
 * ({@code CapacityExhaustedException}, counted in {@link TierStats#diskSpillFailures()}); the
 * block stays in its host slot, and host pressure falls back to the paths that exist for a full
 * host (demotions refused, device admission waits, {@code CapacityExhaustedException} or
 * {@code BudgetExceededException}). Nothing is lost. Unreferenced records stay ordinary LRU
 * records. Disk pins are taken and dropped under this tier's lock (host before disk); the cache
 * calls in with its own lock held (cache before host).
 *
 * <h2>Pin ownership, and a pinned record found damaged</h2>
 * A pin names one record (the serial {@link DiskTier#pin} returns, kept per id), never a key:
 * several ids may hold the same hash (a block sealed while another indexed its hash keeps its own
 * id and shares the record), and a key may hold a new record after the old one went. A pinned
 * record still leaves the disk when it fails verification (found by any reader: a promotion, a
 * read, read-ahead, a match, a spill that verifies it) or is removed; its pins become broken pins
 * ({@link DiskTier#pinBroken}, asked without the disk lock). Every id holding one finds out the
 * next time anything asks about its disk copy ({@link #hasCopy}, {@link #takeOverCopy},
 * {@link #residence}, {@link #pinBelow}, a promotion, read or read-ahead), and at once for the
 * indexed id through the eviction notice ({@link #drainDiskEvictions}): the copy is gone (ON_DISK
 * and PINNED cleared) and the broken pin released through {@link DiskTier#unpin}, which touches no
 * other record. A block left without a copy anywhere is then lost as a counted event (the cache
 * marks it LOST: its next lease or read fails with {@code CorruptBlockException}); a block with
 * another copy (device, host) loses nothing.
 *
 * <h2>Concurrency and lock order</h2>
 * The cache lock comes before this tier's lock, which comes before the disk tier's. This tier
 * never calls the cache while holding its lock: a victim to be freed through the cache, or
 * spilled to disk, is first marked MOVING and the lock released. A block freed by the cache while
 * it is MOVING is detached from its slot at once (its id may be reused straight away) and the
 * orphaned slot is freed by the move when it ends, so a slot being read is never
 * reused. Device copies run on the device tier's stream outside every lock.
 *
 * <h2>Failure</h2>
 * A demotion that finds no host slot, or whose copy does not complete by its deadline, leaves the
 * device copy as it was and returns false. A promotion that times out keeps both copies and parks
 * the device slot until its late copy completes ({@link #releaseLateSlots}); a later promotion of
 * the same block waits for that copy, and asks the cache to notice when it lands (with no mover
 * running, nobody else may). A disk miss or a corrupt record is a counted loss
 * ({@link LowerTier#LOST}), never bytes.
 */
final class HostTier implements LowerTier, AutoCloseable {

    private static final byte CLEAN = 1;
    private static final byte ON_DISK = 2;
    private static final byte MOVING = 4;
    /** Out of the host policy while it waits in the mover's host-to-disk queue. */
    private static final byte QUEUED = 8;
    /** Referenced in the cache ({@link #pinBelow}): no copy of it may be lost below. */
    private static final byte NEEDED = 16;
    /** This id holds one pin on its disk record: NEEDED, ON_DISK and no host slot. */
    private static final byte PINNED = 32;
    /** {@link #spill} result: nothing stored. */
    private static final long NOT_STORED = DiskTier.NO_PIN;
    /** {@link #spill} result: stored without a pin (record serials, the pins, are positive). */
    private static final long STORED = -1;

    private final KvLayout layout;
    private final DeviceTier device;
    private final PinnedHostBuffer pinned;
    /** Per host slot, {@link #identityBytes}: the identity of the block in it. */
    private final MemorySegment hostIdentities;
    private final long identityBytes;
    private final java.lang.foreign.Arena identityArena = java.lang.foreign.Arena.ofShared();
    private final SlotAllocator slots;
    private final MemorySegment[] slotViews;
    private final EvictionPolicy policy;
    private final int[] hostSlot;
    private final byte[] state;
    private final long[] hashHi;
    private final long[] hashLo;
    /** Per id: the pin it holds on its disk record ({@link DiskTier#pin}) while PINNED, else {@link DiskTier#NO_PIN}. */
    private final long[] diskPin;
    private final DiskTier disk;
    private final StagingPool staging;
    private volatile IntConsumer matchedBelowListener = id -> { };
    private volatile boolean readOnAdopt = true;
    private final long copyTimeoutNanos;
    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<LateCopy> late = new ArrayDeque<>();
    private final ConcurrentLinkedQueue<long[]> diskEvicted = new ConcurrentLinkedQueue<>();
    private final TierCounters counters;
    private int reservedHostSlots;
    private int orphanedSlots;
    /** Spills that may have pinned a record this tier has not recorded yet (the lock released meanwhile). */
    private int pinningSpills;
    private boolean closed;
    private PagedKvCache cache;

    /**
     * A copy that missed its deadline: a promotion's ({@code deviceSlot >= 0}; its host slot is
     * freed with it if the cache freed the block meanwhile, {@code orphanedHostSlot >= 0}) or a
     * demotion's parked host slot ({@code deviceSlot < 0}, {@code blockId = -1 - slot}).
     */
    private record LateCopy(GpuEvent event, int deviceSlot, int blockId, int orphanedHostSlot) {
        LateCopy(GpuEvent event, int deviceSlot, int blockId) {
            this(event, deviceSlot, blockId, -1);
        }
    }

    HostTier(KvLayout layout, DeviceTier device, PinnedHostBuffer pinned, int hostBlocks, int maxBlocks,
            String policyName, DiskTier disk, StagingPool staging, long copyTimeoutNanos, TierCounters counters) {
        this.layout = layout;
        this.device = device;
        this.pinned = pinned;
        int bytes = layout.bytesPerBlock();
        this.slots = new SlotAllocator(hostBlocks);
        this.slotViews = new MemorySegment[hostBlocks];
        for (int i = 0; i < hostBlocks; i++) {
            slotViews[i] = pinned.segment().asSlice((long) i * bytes, bytes);
        }
        this.identityBytes = BlockIdentity.bytes(layout.blockSizeTokens());
        this.hostIdentities = identityArena.allocate(Math.max(1, hostBlocks) * identityBytes, 64);
        this.policy = EvictionPolicies.create(policyName, maxBlocks);
        this.hostSlot = new int[maxBlocks];
        Arrays.fill(hostSlot, -1);
        this.state = new byte[maxBlocks];
        this.hashHi = new long[maxBlocks];
        this.hashLo = new long[maxBlocks];
        this.diskPin = new long[maxBlocks];
        this.disk = disk;
        this.staging = staging;
        this.copyTimeoutNanos = copyTimeoutNanos;
        this.counters = counters;
        if (disk != null) {
            disk.setEvictionListener((hi, lo) -> diskEvicted.add(new long[] {hi, lo}));
        }
    }

    void bind(PagedKvCache owner) {
        this.cache = owner;
    }

    // ------------------------------------------------------------------ LowerTier

    @Override
    public boolean demote(int blockId, long hi, long lo, MemorySegment identity, int deviceSlot) {
        int hs = reserveHostSlot();
        if (hs < 0) {
            counters.hostAllocationFailures.increment();
            return false;
        }
        long start = System.nanoTime();
        GpuEvent ev = device.copyToHost(deviceSlot, slotViews[hs]);
        boolean done = DeviceTier.await(ev, start + copyTimeoutNanos);
        lock.lock();
        try {
            reservedHostSlots--;
            if (!done) {
                late.add(new LateCopy(ev, -1, -1 - hs)); // host slot parked until the copy lands
                return false;
            }
            ev.close();
            MemorySegment.copy(identity, 0, hostIdentities, identityOffset(hs), identityBytes);
            releaseDiskPin(blockId); // the host slot holds it now
            hostSlot[blockId] = hs;
            state[blockId] &= NEEDED;
            hashHi[blockId] = hi;
            hashLo[blockId] = lo;
            policy.onAdmit(blockId, 0, lo);
        } finally {
            lock.unlock();
        }
        counters.demotions.record(blockId, layout.bytesPerBlock(), System.nanoTime() - start);
        return true;
    }

    @Override
    public int promote(int blockId, MemorySegment identity, int deviceSlot, long deadlineNanos) {
        long start = System.nanoTime();
        MemorySegment src;
        boolean fromDisk = false;
        lock.lock();
        try {
            while (hostSlot[blockId] >= 0 && (state[blockId] & MOVING) != 0) { // a spill or a late promotion reads it
                boolean lateCopies = !late.isEmpty();
                lock.unlock();
                if (lateCopies) {
                    // A late promotion of this block stays MOVING until its landing is noticed, which
                    // only the cache asks for (a mover, another allocation): ask here, or wait forever.
                    cache.tierControl().reclaimLateSlotsNow();
                }
                java.util.concurrent.locks.LockSupport.parkNanos(20_000);
                lock.lock();
            }
            int hs = hostSlot[blockId];
            if (hs >= 0) {
                state[blockId] |= MOVING;
                policy.onRemove(blockId);
                src = slotViews[hs];
            } else if (diskCopyHeld(blockId)) {
                fromDisk = true;
                src = null;
            } else {
                return LOST;
            }
        } finally {
            lock.unlock();
        }
        if (fromDisk) {
            return promoteFromDisk(blockId, identity, deviceSlot, start);
        }
        GpuEvent ev = device.copyFromHost(src, deviceSlot);
        boolean done = DeviceTier.await(ev, deadlineNanos);
        lock.lock();
        try {
            if (!done) {
                late.add(new LateCopy(ev, deviceSlot, blockId)); // keep MOVING until it lands
                return TIMED_OUT;
            }
            ev.close();
            endMove(blockId, CLEAN);
        } finally {
            lock.unlock();
        }
        counters.promotions.record(blockId, layout.bytesPerBlock(), System.nanoTime() - start);
        return PROMOTED;
    }

    /** Disk to device through the staging buffer; the block stays on disk as a clean copy. */
    private int promoteFromDisk(int blockId, MemorySegment identity, int deviceSlot, long start) {
        long hi;
        long lo;
        lock.lock();
        try {
            hi = hashHi[blockId];
            lo = hashLo[blockId];
        } finally {
            lock.unlock();
        }
        int buffer = staging.acquire();
        try {
            if (!disk.get(hi, lo, identity, staging.block(buffer))) {
                diskMiss(blockId);
                return LOST;
            }
            counters.diskLoads.record(blockId, layout.bytesPerBlock(), System.nanoTime() - start);
            GpuEvent ev = device.copyFromHost(staging.block(buffer), deviceSlot);
            ev.synchronize(); // the staging buffer is reused next: wait for the copy whatever the deadline
            ev.close();
        } finally {
            staging.release(buffer);
        }
        counters.promotions.record(blockId, layout.bytesPerBlock(), System.nanoTime() - start);
        return PROMOTED;
    }

    @Override
    public boolean read(int blockId, MemorySegment identity, MemorySegment out) {
        long start = System.nanoTime();
        long hi;
        long lo;
        int hs;
        lock.lock();
        try {
            hs = hostSlot[blockId];
            if (hs < 0 && !diskCopyHeld(blockId)) {
                return false;
            }
            hi = hashHi[blockId];
            lo = hashLo[blockId];
            if (hs >= 0) { // copied under the lock: the slot cannot be dropped or reused meanwhile
                MemorySegment.copy(slotViews[hs], 0, out, 0, layout.bytesPerBlock());
                policy.onAccess(blockId);
            }
        } finally {
            lock.unlock();
        }
        if (hs >= 0) {
            counters.hostReads.record(blockId, layout.bytesPerBlock(), System.nanoTime() - start);
            return true;
        }
        if (!disk.get(hi, lo, identity, out)) { // identity and checksum verified before any byte stays in out
            diskMiss(blockId);
            return false;
        }
        counters.diskReads.record(blockId, layout.bytesPerBlock(), System.nanoTime() - start);
        return true;
    }

    /**
     * Counts and reports a disk read that missed: the block's record is gone (quarantined as it
     * was read, evicted, or another identity's), so is this id's disk copy, and its pin is
     * released (a broken pin, or one on a record that is not this block's).
     */
    private void diskMiss(int blockId) {
        counters.diskMisses.increment();
        TierEvents.fault("disk miss for block " + blockId);
        lock.lock();
        try {
            diskCopyGone(blockId);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether this id's disk copy is there: ON_DISK, and for a PINNED id its pin not broken. A
     * broken pin (the record failed verification or was removed since) is settled here: the copy
     * is gone ({@link #diskCopyGone}). Lock held.
     */
    private boolean diskCopyHeld(int blockId) {
        if ((state[blockId] & ON_DISK) == 0) {
            return false;
        }
        if ((state[blockId] & PINNED) != 0 && !closed && disk.pinBroken(diskPin[blockId])) {
            diskCopyGone(blockId);
            return false;
        }
        return true;
    }

    /** This id's disk record is gone: clears ON_DISK and releases its pin, if it holds one. Lock held. */
    private void diskCopyGone(int blockId) {
        releaseDiskPin(blockId);
        state[blockId] &= ~ON_DISK;
    }

    @Override
    public void releaseLateSlots(IntConsumer sink) {
        lock.lock();
        try {
            for (int n = late.size(); n > 0; n--) {
                LateCopy c = late.poll();
                if (!c.event().isComplete()) {
                    late.add(c);
                    continue;
                }
                c.event().close();
                if (c.deviceSlot() >= 0) {
                    if (c.orphanedHostSlot() >= 0) { // the block was freed meanwhile: its id may be another's now
                        orphanedSlots--;
                        slots.free(c.orphanedHostSlot());
                    } else {
                        // The cache gave up on this promotion: the device slot goes back empty-handed,
                        // so the host copy is still the block's own, not a clean second copy.
                        endMove(c.blockId(), (byte) 0);
                    }
                    sink.accept(c.deviceSlot());
                } else {
                    slots.free(-1 - c.blockId());
                }
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void matchedBelow(int blockId) {
        matchedBelowListener.accept(blockId);
    }

    /** @param listener told (under the cache lock, so it must not block) of each prefix hit below the device */
    void onMatchedBelow(IntConsumer listener) {
        this.matchedBelowListener = listener;
    }

    @Override
    public boolean takeOverCopy(int blockId) {
        lock.lock();
        try {
            if (hostSlot[blockId] >= 0 && (state[blockId] & CLEAN) != 0) {
                state[blockId] &= ~CLEAN;
                return true;
            }
            return hostSlot[blockId] < 0 && diskCopyHeld(blockId);
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>A disk copy whose pin turned out broken is settled on the way (it is gone; see the class
     * comment), which changes no copy that exists.
     */
    @Override
    public boolean hasCopy(int blockId) {
        lock.lock();
        try {
            return hostSlot[blockId] >= 0 || diskCopyHeld(blockId);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int residence(int blockId) {
        lock.lock();
        try {
            if (hostSlot[blockId] >= 0) {
                return RESIDENT_HOST;
            }
            return diskCopyHeld(blockId) ? RESIDENT_DISK : RESIDENT_NOWHERE;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean spill(int blockId) {
        lock.lock();
        try {
            if (disk == null || hostSlot[blockId] < 0 || (state[blockId] & (MOVING | CLEAN)) != 0
                    || (hashHi[blockId] | hashLo[blockId]) == 0) {
                return false;
            }
            return leaveHost(blockId, false);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean load(int blockId, MemorySegment identity) {
        long hi;
        long lo;
        lock.lock();
        try {
            if (disk == null || hostSlot[blockId] >= 0 || (state[blockId] & ON_DISK) == 0) {
                return false;
            }
            if (!diskCopyHeld(blockId)) { // its record failed verification elsewhere since it was pinned
                return false;
            }
            hi = hashHi[blockId];
            lo = hashLo[blockId];
        } finally {
            lock.unlock();
        }
        long start = System.nanoTime();
        int hs = reserveHostSlot();
        if (hs < 0) {
            counters.hostAllocationFailures.increment();
            return false;
        }
        boolean hit = false;
        try {
            hit = disk.get(hi, lo, identity, slotViews[hs]);
        } finally {
            lock.lock();
            try {
                reservedHostSlots--;
                if (hit) { // verified bytes; the id cannot change while the cache pins it in transit
                    MemorySegment.copy(identity, 0, hostIdentities, identityOffset(hs), identityBytes);
                    releaseDiskPin(blockId); // the host slot holds it now; a spill pins the record again
                    hostSlot[blockId] = hs; // the disk record stays too, unless it was evicted meanwhile
                    policy.onAdmit(blockId, 0, lo);
                } else {
                    slots.free(hs); // a miss: the lease that needs the block finds it and reports it
                }
            } finally {
                lock.unlock();
            }
        }
        if (!hit) {
            diskMiss(blockId); // counted here: the lease that follows fails without another read
            return false;
        }
        counters.diskToHost.record(blockId, layout.bytesPerBlock(), System.nanoTime() - start);
        return true;
    }

    /**
     * Takes up to {@code max} host blocks, in policy order, out of the policy and offers each to
     * the mover's host-to-disk queue; a refused offer (queue full) ends the call. A clean copy
     * (the device holds the block too) is dropped instead, at no cost.
     *
     * @param max   most blocks, >= 0
     * @param queue offered each block id; false when full
     * @return blocks queued or dropped
     */
    int queueSpills(int max, java.util.function.IntPredicate queue) {
        if (disk == null) {
            return 0;
        }
        lock.lock();
        try {
            int done = 0;
            while (done < max) {
                int victim = policy.victim();
                if (victim < 0 || (hashHi[victim] | hashLo[victim]) == 0) {
                    break;
                }
                if ((state[victim] & CLEAN) != 0) { // the device holds it too: dropping costs nothing
                    dropCleanCopy(victim);
                } else if (queue.test(victim)) {
                    policy.onRemove(victim);
                    state[victim] |= QUEUED;
                } else {
                    break;
                }
                done++;
            }
            return done;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Drains one entry of the host-to-disk queue: spills the block if it is still queued in its
     * host slot.
     *
     * @param blockId a block id from the queue
     * @return true if it spilled; false if its state changed since it was queued (skipped), or the
     *         disk refused it (it stays on the host)
     */
    boolean spillQueued(int blockId) {
        lock.lock();
        try {
            if ((state[blockId] & QUEUED) == 0) {
                return false;
            }
            state[blockId] &= ~QUEUED;
            if (hostSlot[blockId] < 0 || (state[blockId] & MOVING) != 0) {
                return false; // left the host, or a promotion is reading it (it re-admits the block)
            }
            return leaveHost(blockId, false);
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>With {@linkplain #readOnAdopt read on adopt} (the default, for promotion on match) the
     * record is read (its identity compared and its checksum verified) once: into a free host
     * slot when one is free, so that the promotion or read that usually follows a match is a host
     * copy rather than a second disk read; else through a staging buffer. No host block is
     * evicted or spilled for it (the caller holds the cache lock). Without it only the record's
     * header and identity are read ({@link DiskTier#match}) and the block is bound to the record
     * alone: the read that follows ({@link #read}, {@link #promote}) verifies the checksum as it
     * copies, once, and a damaged payload is a counted loss there rather than a miss here. Either
     * way a stored identity that differs is verified at once, so damaged identity bytes are a
     * counted miss here rather than a hash collision.
     */
    @Override
    public int adopt(int blockId, long hi, long lo, MemorySegment identity) {
        if (disk == null) {
            return ABSENT;
        }
        int found = readOnAdopt ? adoptRead(blockId, hi, lo, identity) : disk.match(hi, lo, identity);
        if (found == DiskTier.COLLISION) {
            return COLLISION;
        }
        if (found < 0) {
            if (found != DiskTier.ABSENT) {
                counters.diskMisses.increment(); // damaged, quarantined
            }
            return ABSENT;
        }
        if (!readOnAdopt) {
            lock.lock();
            try {
                bindAdopted(blockId, hi, lo, -1);
            } finally {
                lock.unlock();
            }
        }
        counters.diskAdoptions.increment();
        return ADOPTED;
    }

    /**
     * Reads a record of the expected identity for an adoption, into a free host slot (bound to
     * the id with it) or through a staging buffer (bound to the record alone).
     *
     * @return the block's length on a hit, else {@link DiskTier#ABSENT}, {@link DiskTier#DAMAGED}
     *     or {@link DiskTier#COLLISION}
     */
    private int adoptRead(int blockId, long hi, long lo, MemorySegment identity) {
        if (!disk.contains(hi, lo)) {
            return DiskTier.ABSENT;
        }
        long start = System.nanoTime();
        int hs = freeHostSlot();
        int found = DiskTier.ABSENT;
        if (hs < 0) {
            int buffer = staging.acquire();
            try {
                found = disk.load(hi, lo, identity, staging.block(buffer));
            } finally {
                staging.release(buffer);
            }
        } else {
            try {
                found = disk.load(hi, lo, identity, slotViews[hs]);
            } finally {
                lock.lock();
                try {
                    reservedHostSlots--;
                    if (found >= 0) {
                        MemorySegment.copy(identity, 0, hostIdentities, identityOffset(hs), identityBytes);
                    } else {
                        slots.free(hs);
                    }
                } finally {
                    lock.unlock();
                }
            }
        }
        if (found >= 0) {
            lock.lock();
            try {
                bindAdopted(blockId, hi, lo, hs);
                if (hs >= 0) {
                    policy.onAdmit(blockId, 0, lo);
                }
            } finally {
                lock.unlock();
            }
            if (hs >= 0) {
                counters.diskToHost.record(blockId, layout.bytesPerBlock(), System.nanoTime() - start);
            }
        }
        return found == -1 ? DiskTier.DAMAGED : found; // -1 from load: a miss on a key just seen, so damaged
    }

    /**
     * Sets whether {@link #adopt} reads and verifies a record's bytes (into a free host slot)
     * when a prefix match finds it, or only its header and token ids.
     *
     * @param enabled true to read the bytes at adoption (the default)
     */
    void readOnAdopt(boolean enabled) {
        this.readOnAdopt = enabled;
    }

    /** Binds an adopted disk record to a block id, with its bytes in host slot {@code hs} or none (-1). Lock held. */
    private void bindAdopted(int blockId, long hi, long lo, int hs) {
        hostSlot[blockId] = hs;
        state[blockId] = ON_DISK;
        hashHi[blockId] = hi;
        hashLo[blockId] = lo;
    }

    /** A host slot free now, reserved (no eviction, no spill), or -1. */
    private int freeHostSlot() {
        lock.lock();
        try {
            return allocateReserved();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean pinBelow(int blockId) {
        lock.lock();
        try {
            state[blockId] |= NEEDED;
            if (hostSlot[blockId] >= 0) {
                return true; // a host slot never drops a NEEDED block without a copy elsewhere
            }
            return holdDiskCopy(blockId);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void unpinBelow(int blockId) {
        lock.lock();
        try {
            state[blockId] &= ~NEEDED;
            releaseDiskPin(blockId);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Releases this id's pin, if it holds one: from its record, or the broken pin the record left
     * when it failed verification or was removed (after close there is nothing to release: a
     * lease released late only clears the bit). Lock held.
     */
    private void releaseDiskPin(int blockId) {
        if ((state[blockId] & PINNED) != 0) {
            state[blockId] &= ~PINNED;
            long pin = diskPin[blockId];
            diskPin[blockId] = DiskTier.NO_PIN;
            if (!closed) {
                disk.unpin(hashHi[blockId], hashLo[blockId], pin);
            }
        }
    }

    @Override
    public void forget(int blockId) {
        lock.lock();
        try {
            if ((state[blockId] & MOVING) != 0 && hostSlot[blockId] >= 0) {
                // A spill or a late promotion is reading the slot: detach it now (the id may be
                // reused at once); the spill, or the late copy's release, frees the orphaned slot.
                orphanLatePromotion(blockId, hostSlot[blockId]);
                orphanedSlots++;
                policy.onRemove(blockId);
                hostSlot[blockId] = -1;
                state[blockId] = 0;
                return;
            }
            dropHostCopy(blockId);
            releaseDiskPin(blockId);
            state[blockId] = 0;
        } finally {
            lock.unlock();
        }
    }

    /** Hands a late promotion of a block the cache frees its host slot, to free when the copy lands. Lock held. */
    private void orphanLatePromotion(int blockId, int hs) {
        for (LateCopy c : late) {
            if (c.deviceSlot() >= 0 && c.blockId() == blockId && c.orphanedHostSlot() < 0) {
                late.remove(c);
                late.add(new LateCopy(c.event(), c.deviceSlot(), blockId, hs));
                return; // leaves the loop before the changed deque is iterated again
            }
        }
    }

    // ------------------------------------------------------------------ host slots

    /**
     * Finds a free host slot, making room by policy order: clean copies are dropped, hashed
     * blocks spill to disk, unreferenced blocks are freed through the cache.
     *
     * @return a host slot, or -1 if nothing could leave
     */
    private int reserveHostSlot() {
        lock.lock();
        try {
            int attempts = policy.size() + 1;
            while (attempts-- > 0) {
                int s = allocateReserved();
                if (s >= 0) {
                    return s;
                }
                int victim = policy.victim();
                if (victim < 0) {
                    return -1;
                }
                if ((state[victim] & CLEAN) != 0) {
                    dropCleanCopy(victim);
                    continue;
                }
                if (!leaveHost(victim, true)) {
                    toBackOfPolicy(victim); // cannot leave now
                }
            }
            return allocateReserved();
        } finally {
            lock.unlock();
        }
    }

    /** A free host slot counted as reserved, or -1 if none is free. Lock held. */
    private int allocateReserved() {
        int s = slots.allocate();
        if (s >= 0) {
            reservedHostSlots++;
        }
        return s;
    }

    /**
     * Spills a victim to disk or, if {@code mayFree} and the spill fails, frees it through the
     * cache if unreferenced. A victim that stays is back in the policy when {@code mayFree} is
     * false (the caller re-queues it otherwise). Lock held on entry and exit.
     */
    private boolean leaveHost(int victim, boolean mayFree) {
        policy.onRemove(victim);
        state[victim] |= MOVING;
        int hs = hostSlot[victim];
        long hi = hashHi[victim];
        long lo = hashLo[victim];
        boolean pin = (state[victim] & NEEDED) != 0; // its record may become its only copy: pin it as it is written
        long stored = NOT_STORED;
        if (pin) {
            pinningSpills++;
        }
        lock.unlock();
        try {
            if (disk != null && (hi | lo) != 0) {
                stored = spill(victim, hi, lo, hs, pin);
            }
        } finally {
            lock.lock();
            if (pin) {
                pinningSpills--;
            }
        }
        boolean spilled = stored != NOT_STORED;
        long heldPin = pin ? stored : DiskTier.NO_PIN; // a pinning spill returns its pin
        if (hostSlot[victim] != hs) { // freed by the cache while it moved: the slot is an orphan now
            orphanedSlots--;
            slots.free(hs);
            if (heldPin != DiskTier.NO_PIN) {
                disk.unpin(hi, lo, heldPin); // the id is gone (perhaps reused): its pin goes too
            }
            return true;
        }
        state[victim] &= ~MOVING;
        if (spilled) {
            spilled = settlePin(victim, hi, lo, heldPin);
        }
        if (spilled) {
            state[victim] |= ON_DISK;
            dropHostCopy(victim);
            lock.unlock();
            try {
                cache.tierControl().retireIfUnreferenced(victim); // the record is found again by hash; the id is not needed
            } finally {
                lock.lock();
            }
            return true;
        }
        if (!mayFree) {
            policy.onAdmit(victim, 0, lo);
            return false;
        }
        lock.unlock();
        boolean freed;
        try {
            freed = cache.tierControl().evictIfUnreferenced(victim); // calls forget(victim), which drops the copy
        } finally {
            lock.lock();
        }
        if (freed) {
            counters.hostEvictions.increment();
        }
        return freed;
    }

    /**
     * After a spill, before the host slot goes: makes the record's pin match whether the block is
     * NEEDED now (the cache may have said so, or the opposite, while the lock was released). Lock
     * held.
     *
     * @param heldPin the pin the spill took ({@link DiskTier#NO_PIN} for none)
     * @return false if the record is no copy to rely on: the block became NEEDED and its record was
     *         evicted before it could be pinned, or the pinned record failed verification (found
     *         by another reader) meanwhile. The spill then counts as failed and the block stays
     *         on the host
     */
    private boolean settlePin(int victim, long hi, long lo, long heldPin) {
        boolean needed = (state[victim] & NEEDED) != 0;
        long pin = heldPin;
        if (pin != DiskTier.NO_PIN && (!needed || disk.pinBroken(pin))) {
            boolean broken = !disk.unpin(hi, lo, pin);
            pin = DiskTier.NO_PIN;
            if (broken) {
                return false;
            }
        } else if (needed && pin == DiskTier.NO_PIN) {
            pin = disk.pin(hi, lo);
            if (pin == DiskTier.NO_PIN) {
                return false;
            }
        }
        if (needed) {
            state[victim] |= PINNED;
            diskPin[victim] = pin;
        }
        return true;
    }

    /**
     * Writes a host block to disk.
     *
     * @return the pin on its record if {@code pin} ({@link DiskTier#putPinned}), {@link #STORED}
     *         if stored without one, {@link #NOT_STORED} if the disk declined or refused it
     */
    private long spill(int blockId, long hi, long lo, int hs, boolean pin) {
        long start = System.nanoTime();
        try {
            MemorySegment identity = hostIdentities.asSlice(identityOffset(hs), identityBytes);
            long stored = pin ? disk.putPinned(hi, lo, identity, slotViews[hs])
                    : disk.put(hi, lo, identity, slotViews[hs]) ? STORED : NOT_STORED;
            if (stored != NOT_STORED) {
                counters.diskSpills.record(blockId, layout.bytesPerBlock(), System.nanoTime() - start);
            }
            return stored;
        } catch (TierKvException e) {
            counters.diskSpillFailures.increment();
            TierEvents.fault("spill of block " + blockId + " failed: " + e.getMessage());
            return NOT_STORED;
        }
    }

    /** Ends a promotion's read of the host copy (the cache keeps the block in transit meanwhile). */
    private void endMove(int blockId, byte addFlag) {
        state[blockId] &= ~(MOVING | QUEUED); // a queued spill of a block promoted meanwhile is skipped
        state[blockId] |= addFlag;
        if (hostSlot[blockId] >= 0) {
            policy.onAdmit(blockId, 0, hashLo[blockId]);
        }
    }

    /**
     * Drops a clean host copy (the device holds the block too). A referenced block whose disk
     * record was a second clean copy gets that record pinned now: the device may hand its slot
     * over to the record at any time ({@link #takeOverCopy}). Lock held.
     */
    private void dropCleanCopy(int victim) {
        policy.onRemove(victim);
        counters.hostCleanDrops.increment();
        dropHostCopy(victim);
        holdDiskCopy(victim);
    }

    /**
     * Puts a victim that could not leave (spill refused, still referenced) at the back of the
     * policy, unless it left the host or started moving while the lock was released (a promotion
     * re-admits it when it ends). Lock held.
     */
    private void toBackOfPolicy(int victim) {
        policy.onRemove(victim);
        if (hostSlot[victim] >= 0 && (state[victim] & (MOVING | QUEUED)) == 0) {
            policy.onAdmit(victim, 0, hashLo[victim]);
        }
    }

    /**
     * For a NEEDED block held on disk without a host slot: pins its record if this id does not
     * hold a pin yet. A record already gone (evicted before the pin; its notice not yet drained,
     * or pinned and since found damaged: a broken pin) clears ON_DISK at once, so nothing trusts
     * it meanwhile ({@link #takeOverCopy}). Lock held.
     *
     * @return whether the record is on disk and pinned by this id
     */
    private boolean holdDiskCopy(int blockId) {
        byte st = state[blockId];
        if ((st & (NEEDED | ON_DISK)) != (NEEDED | ON_DISK) || hostSlot[blockId] >= 0) {
            return false;
        }
        if ((st & PINNED) != 0) {
            return diskCopyHeld(blockId); // false if the pinned record failed verification since
        }
        long pin = disk.pin(hashHi[blockId], hashLo[blockId]);
        if (pin != DiskTier.NO_PIN) {
            state[blockId] |= PINNED;
            diskPin[blockId] = pin;
            return true;
        }
        state[blockId] &= ~ON_DISK;
        return false;
    }

    private void dropHostCopy(int blockId) {
        policy.onRemove(blockId);
        if (hostSlot[blockId] >= 0) {
            slots.free(hostSlot[blockId]);
            hostSlot[blockId] = -1;
        }
        state[blockId] &= ~CLEAN;
    }

    private long identityOffset(int hs) {
        return hs * identityBytes;
    }

    /**
     * Tells the cache about disk records evicted, removed or quarantined since the last call, so
     * ids held only on disk are freed or marked lost. A notice reaches the id the cache indexes
     * under the key. For an id that holds a pin, its pin says exactly whether its record went
     * ({@link DiskTier#pinBroken}; the broken pin is released here); for one that does not, a key
     * that is on disk again (written anew since) makes the notice stale and it is skipped. Called
     * by the mover, outside every lock.
     *
     * @return records processed
     */
    int drainDiskEvictions() {
        int n = 0;
        for (long[] h; (h = diskEvicted.poll()) != null; n++) {
            int id = cache.diagnostics().indexedBlock(h[0], h[1]);
            if (id < 0) {
                continue;
            }
            boolean onlyOnDisk;
            lock.lock();
            try {
                // A key written again since its record went (a later spill of the same block) is on
                // disk now: for an unpinned id the notice is stale and must not drop the new record's
                // block. A pinned id knows which record its pin holds.
                boolean gone = hashHi[id] == h[0] && hashLo[id] == h[1] && (state[id] & ON_DISK) != 0
                        && ((state[id] & PINNED) != 0 ? disk.pinBroken(diskPin[id]) : !disk.contains(h[0], h[1]));
                if (gone) {
                    diskCopyGone(id); // whatever other copies exist
                }
                onlyOnDisk = gone && hostSlot[id] < 0;
            } finally {
                lock.unlock();
            }
            if (onlyOnDisk) {
                cache.tierControl().droppedBelow(id); // frees it if unreferenced, marks it lost otherwise; no-op on the device
            }
        }
        return n;
    }

    /**
     * Drops up to {@code count} host blocks by policy order (clean copies, spills, unreferenced).
     *
     * @param count most blocks to remove, >= 0
     * @return blocks that left the host tier
     */
    int evict(int count) {
        int done = 0;
        lock.lock();
        try {
            int attempts = policy.size();
            while (done < count && attempts-- > 0) {
                int victim = policy.victim();
                if (victim < 0) {
                    break;
                }
                if ((state[victim] & CLEAN) != 0) {
                    dropCleanCopy(victim);
                    done++;
                } else if (leaveHost(victim, true)) {
                    done++;
                } else {
                    toBackOfPolicy(victim);
                }
            }
        } finally {
            lock.unlock();
        }
        return done;
    }

    /** @return host slots in use */
    int usedBlocks() {
        lock.lock();
        try {
            return slots.usedCount();
        } finally {
            lock.unlock();
        }
    }

    /** @return transfer staging buffers of one block each */
    int stagingBuffers() {
        return staging.capacity();
    }

    /** @return host slots */
    int capacityBlocks() {
        return slots.capacity();
    }

    /**
     * Host-side invariants: free + used == capacity, no slot twice, the policy holds exactly the
     * host-resident blocks that are neither moving nor queued for a spill, and an id holds a disk
     * pin only while it is NEEDED, ON_DISK and without a host slot. Unless a pinning spill is in
     * flight, the disk's pins are exactly those the ids hold: each pin held by as many ids as it
     * counts (on its record, or broken), every pinned record held by an id, no broken pin without
     * a holder.
     *
     * @return violations, empty when consistent
     */
    java.util.List<String> checkInvariants() {
        lock.lock();
        try {
            java.util.List<String> bad = new java.util.ArrayList<>();
            String s = slots.check();
            if (!s.isEmpty()) {
                bad.add("host slots: " + s);
            }
            int resident = 0;
            int parked = 0;
            for (LateCopy c : late) {
                if (c.deviceSlot() < 0) {
                    parked++;
                }
            }
            boolean[] seen = new boolean[slots.capacity()];
            for (int id = 0; id < hostSlot.length; id++) {
                int hs = hostSlot[id];
                boolean pinOk = (state[id] & (NEEDED | ON_DISK)) == (NEEDED | ON_DISK) && hs < 0;
                if ((state[id] & PINNED) != 0 && !pinOk) {
                    bad.add("block " + id + " holds a disk pin but state " + state[id] + " host slot " + hs
                            + " (expected NEEDED, ON_DISK, no host slot)");
                }
                if (((state[id] & PINNED) != 0) != (diskPin[id] != DiskTier.NO_PIN)) {
                    bad.add("block " + id + " state " + state[id] + " but disk pin " + diskPin[id]);
                }
                if (hs < 0) {
                    if (policy.contains(id)) {
                        bad.add("block " + id + " in host policy without a host slot");
                    }
                    continue;
                }
                resident++;
                if (seen[hs]) {
                    bad.add("host slot " + hs + " held twice");
                }
                seen[hs] = true;
                if (!slots.isAllocated(hs)) {
                    bad.add("block " + id + " host slot " + hs + " not allocated");
                }
                boolean out = (state[id] & (MOVING | QUEUED)) != 0;
                if (out == policy.contains(id)) {
                    bad.add("block " + id + " moving or queued=" + out + " but in host policy=" + policy.contains(id));
                }
            }
            if (resident + parked + reservedHostSlots + orphanedSlots != slots.usedCount()) {
                bad.add("host resident " + resident + " + parked " + parked + " + reserved " + reservedHostSlots
                        + " + orphaned " + orphanedSlots + " != used " + slots.usedCount());
            }
            if (disk != null && !closed && pinningSpills == 0) {
                checkDiskPins(bad);
            }
            return bad;
        } finally {
            lock.unlock();
        }
    }

    /** Compares the disk's pins with those the ids hold, in one disk call; see {@link #checkInvariants}. Lock held. */
    private void checkDiskPins(java.util.List<String> bad) {
        java.util.Map<Long, int[]> holders = new java.util.LinkedHashMap<>(); // pin -> {ids holding it, one of them}
        for (int id = 0; id < state.length; id++) {
            if ((state[id] & PINNED) != 0) {
                int[] h = holders.computeIfAbsent(diskPin[id], p -> new int[2]);
                h[0]++;
                h[1] = id;
            }
        }
        int n = holders.size();
        long[] his = new long[n];
        long[] los = new long[n];
        long[] pins = new long[n];
        int[] counts = new int[n];
        int i = 0;
        for (var e : holders.entrySet()) {
            int id = e.getValue()[1];
            his[i] = hashHi[id];
            los[i] = hashLo[id];
            pins[i] = e.getKey();
            counts[i++] = e.getValue()[0];
        }
        String problem = disk.checkPins(his, los, pins, counts, n);
        if (problem != null) {
            bad.add("disk pins: " + problem);
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            for (LateCopy c : late) {
                c.event().synchronize();
                c.event().close();
            }
            late.clear();
            identityArena.close();
            staging.close();
        } finally {
            lock.unlock();
        }
    }
}
