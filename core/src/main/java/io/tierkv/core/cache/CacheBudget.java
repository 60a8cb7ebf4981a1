package io.tierkv.core.cache;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.core.budget.BudgetKind;
import io.tierkv.core.budget.Budgets;
import io.tierkv.core.error.BudgetExceededException;

/**
 * Enforces the per-cache {@link Budgets} of sequences ({@link SequenceOptions#budgets()}) when
 * they take a new block. One per {@link PagedKvCache}; every method runs with the cache lock held
 * (the lock is released only while a block moves, as for any tier move).
 *
 * <h2>Charging rule</h2>
 * A sequence is charged {@code bytesPerBlock} for every block its own table references, on the
 * tier that holds the block's authoritative bytes now: DEVICE while the block has a top-tier slot,
 * else HOST or DISK ({@link BelowCopies#residence}). A clean copy below a device-resident block is
 * not charged (it can be dropped at no cost). A block shared by several tables (a matched prefix,
 * a fork) is charged to each of them in full. DISK is charged {@code bytesPerBlock} per block,
 * whatever the compressed size of its record. Shares are recounted from the table at each new
 * block (O(table), once per B tokens), so no per-block metadata is added.
 *
 * <h2>Enforcement at a new block</h2>
 * While the device share plus the new block would exceed {@code deviceBytes}, the sequence's own
 * oldest block that may leave the device (sealed, unleased, outside every recent window, not
 * moving) is demoted. Before each such demotion, while the host share plus that block would
 * exceed {@code hostBytes}, the sequence's own oldest host block is spilled to disk, provided the
 * disk share stays within {@code diskBytes}; a spill the disk share or the disk tier refuses is
 * counted. When nothing can move, {@link BudgetExceededException} names the budget, the bytes
 * requested and used, and the limit; nothing already stored is lost (blocks only move down, each
 * move verified by the tiers). A shared block demoted for one sequence leaves the device for all.
 * Leases, prefix matches, forks and read-ahead do not allocate and are not refused: they can take
 * a share above its budget for a while (a lease needs its blocks on the device), and the next new
 * block brings it back or fails. Transfer budgets bound read-ahead ({@code BlockStream}).
 */
// Every method runs with the cache lock held by a caller in another class (PagedKvCache, Sequence,
// TierControl), which Error Prone cannot relate to this class's cache.lock (it has no aliasing).
@SuppressWarnings("GuardedBy")
final class CacheBudget {

    private final PagedKvCache cache;
    @GuardedBy("cache.lock") private int onDevice;
    @GuardedBy("cache.lock") private int onHost;
    @GuardedBy("cache.lock") private int onDisk;
    @GuardedBy("cache.lock") private long demotions;
    @GuardedBy("cache.lock") private long spills;
    @GuardedBy("cache.lock") private long refusedSpills;

    CacheBudget(PagedKvCache cache) {
        this.cache = cache;
    }

    /**
     * Makes room for one new device block of {@code seq} within its budgets. Lock held.
     *
     * @throws BudgetExceededException if its device share cannot be brought under budget
     */
    void admitNewBlock(Sequence seq) {
        Budgets b = seq.options.budgets();
        if (b == null) {
            return;
        }
        long bb = cache.blockBytes;
        for (;;) {
            measure(seq);
            if ((onDevice + 1L) * bb <= b.deviceBytes()) {
                return;
            }
            int victim = oldestOnDevice(seq);
            if (victim < 0) {
                throw exceeded(seq, BudgetKind.DEVICE, onDevice);
            }
            makeHostRoom(seq, b);
            if (cache.tierControl().demoteHeld(victim)) { // the lock held once: the demotion releases it to copy
                demotions++;
            }
        }
    }

    /** Spills the sequence's oldest host blocks until one more block fits its host share. */
    private void makeHostRoom(Sequence seq, Budgets b) {
        long bb = cache.blockBytes;
        int from = 0;
        for (;;) {
            measure(seq);
            if ((onHost + 1L) * bb <= b.hostBytes()) {
                return;
            }
            int index = oldestOnHost(seq, from);
            if (index < 0) {
                throw exceeded(seq, BudgetKind.HOST, onHost);
            }
            if ((onDisk + 1L) * bb > b.diskBytes()) {
                refusedSpills++;
                throw exceeded(seq, BudgetKind.DISK, onDisk);
            }
            if (cache.spillBelow(seq.blockId(index))) {
                spills++;
            } else {
                refusedSpills++;
                from = index + 1; // the disk tier refused this one: try the next
            }
        }
    }

    private void measure(Sequence seq) {
        onDevice = 0;
        onHost = 0;
        onDisk = 0;
        for (int i = 0, n = seq.blockCount(); i < n; i++) {
            int id = seq.blockId(i);
            if (cache.blocks.slot[id] >= 0) {
                onDevice++;
                continue;
            }
            switch (cache.residence(id)) {
                case LowerTier.RESIDENT_HOST -> onHost++;
                case LowerTier.RESIDENT_DISK -> onDisk++;
                default -> { } // lost or being adopted: holds no bytes
            }
        }
    }

    private int oldestOnDevice(Sequence seq) {
        for (int i = 0, n = seq.blockCount(); i < n; i++) {
            int id = seq.blockId(i);
            if (cache.mayLeaveDevice(id)) {
                return id;
            }
        }
        return -1;
    }

    /** @return the table index of the oldest block at or after {@code from} held in a host slot, or -1 */
    private int oldestOnHost(Sequence seq, int from) {
        for (int i = from, n = seq.blockCount(); i < n; i++) {
            int id = seq.blockId(i);
            if (cache.blocks.slot[id] < 0 && (cache.blocks.bits[id] & BlockStates.TRANSIT) == 0
                    && cache.residence(id) == LowerTier.RESIDENT_HOST) {
                return i;
            }
        }
        return -1;
    }

    private BudgetExceededException exceeded(Sequence seq, BudgetKind kind, int blocks) {
        long bb = cache.blockBytes;
        return new BudgetExceededException("cache[" + seq.options.salt() + "]." + Budgets.field(kind), bb,
                blocks * bb, seq.options.budgets().bytes(kind));
    }

    /** {@return own blocks demoted to keep sequences within their device budgets} */
    long demotions() {
        return demotions;
    }

    /** {@return own blocks spilled to disk to keep sequences within their host budgets} */
    long spills() {
        return spills;
    }

    /** {@return such spills refused by a sequence's disk budget or by the disk tier} */
    long refusedSpills() {
        return refusedSpills;
    }
}
