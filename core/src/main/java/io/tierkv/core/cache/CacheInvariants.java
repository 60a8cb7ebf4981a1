package io.tierkv.core.cache;

import java.util.ArrayList;
import java.util.List;

import static io.tierkv.core.cache.BlockStates.FREE;
import static io.tierkv.core.cache.BlockStates.HELD;
import static io.tierkv.core.cache.BlockStates.INDEXED;
import static io.tierkv.core.cache.BlockStates.LOST;
import static io.tierkv.core.cache.BlockStates.SEALED;
import static io.tierkv.core.cache.BlockStates.TWIN;

/**
 * Recounts a cache's structural facts from scratch and compares them with what it keeps: free +
 * used == capacity for slots and ids; no slot twice; reference counts equal table references plus
 * leases; the index holds exactly the indexed blocks, the twins exactly the TWIN blocks (sealed,
 * unindexed); the policy holds exactly the candidates;
 * recent-block protection equals a recount; with a lower tier, exactly the referenced SEALED
 * blocks are HELD there, a free id is held nowhere below (no host slot, no below bits:
 * {@link BlockOwner#hostSlot}, {@link BlockOwner#belowBits}), exactly the DISK_PINNED ids have
 * a disk pin recorded, and those pins are the disk store's ({@link DiskCopies#check}); slots used equal resident blocks
 * plus reserved and late slots. Called
 * with the cache lock held, so the recount is atomic.
 */
final class CacheInvariants {

    private CacheInvariants() {
    }

    /**
     * Checks every invariant.
     *
     * @param cache the cache, its lock held
     * @param hasLower whether the cache has a lower tier
     * @param openSequences its open sequences
     * @return the violations found, empty when consistent
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller (PagedKvCache); a parameter's lock cannot be named
    static List<String> check(PagedKvCache cache, boolean hasLower, Iterable<Sequence> openSequences) {
        BlockStates b = cache.blocks;
        Admission admission = cache.admission;
        var slots = admission.slots;
        var index = cache.prefix.index;
        var twins = cache.prefix.twins;
        List<String> bad = new ArrayList<>();
        addIf(bad, "slots: ", slots.check());
        addIf(bad, "ids: ", b.checkIds());
        int n = b.capacity();
        int[] tableRefs = new int[n];
        int[] protects = new int[n];
        for (Sequence s : openSequences) {
            s.table.countReferences(tableRefs, protects);
        }
        int[] slotOwner = new int[slots.capacity()];
        java.util.Arrays.fill(slotOwner, -1);
        int resident = 0;
        int indexed = 0;
        int twinCount = 0;
        int candidates = 0;
        int pinned = 0;
        for (int id = 0; id < n; id++) {
            boolean live = b.state(id) != FREE;
            if (live != b.isAllocated(id)) {
                bad.add("block " + id + " state " + b.state(id) + " but id allocated=" + b.isAllocated(id));
            }
            if (!live) {
                if (b.slot[id] >= 0 || b.refs[id] != 0 || b.bits[id] != 0) {
                    bad.add("free block " + id + " holds slot " + b.slot[id] + " refs " + (int) b.refs[id]
                            + " flags " + b.bits[id]);
                }
                if (hasLower && (b.hostSlot[id] != -1 || b.below[id] != 0)) {
                    bad.add("free block " + id + " still held below: host slot " + b.hostSlot[id] + " below bits "
                            + b.below[id]);
                }
                continue;
            }
            if (hasLower && ((b.below[id] & BlockOwner.DISK_PINNED) != 0) != (cache.disks.pinOf(id) != DiskRecords.NO_PIN)) {
                bad.add("block " + id + " below bits " + b.below[id] + " but disk pin " + cache.disks.pinOf(id));
            }
            if (hasLower && (b.below[id] & BlockOwner.DISK_PINNED) != 0) {
                pinned++;
            }
            int s = b.slot[id];
            if (s >= 0) {
                resident++;
                if (s >= slots.capacity() || !slots.isAllocated(s)) {
                    bad.add("block " + id + " slot " + s + " not an allocated slot");
                } else if (slotOwner[s] >= 0) {
                    bad.add("blocks " + slotOwner[s] + " and " + id + " share slot " + s);
                } else {
                    slotOwner[s] = id;
                }
            }
            if (b.refs[id] != tableRefs[id] + b.leases[id]) {
                bad.add("block " + id + " refs " + (int) b.refs[id] + " != table refs " + tableRefs[id] + " + leases "
                        + (int) b.leases[id]);
            }
            boolean held = (b.bits[id] & HELD) != 0;
            if (hasLower && b.state(id) != LOST && held != (b.state(id) == SEALED && b.refs[id] > 0)) {
                bad.add("block " + id + " HELD=" + held + " but state " + b.state(id) + " refs " + (int) b.refs[id]);
            }
            if (b.protect[id] != protects[id]) {
                bad.add("block " + id + " protect " + (int) b.protect[id] + " != recount " + protects[id]);
            }
            boolean isIndexed = (b.bits[id] & INDEXED) != 0;
            if (isIndexed) {
                indexed++;
            }
            if (isIndexed != index.containsBlock(id)) {
                bad.add("block " + id + " INDEXED=" + isIndexed + " but index says " + index.containsBlock(id));
            }
            boolean isTwin = (b.bits[id] & TWIN) != 0;
            if (isTwin) {
                twinCount++;
                if (!twins.contains(id) || b.state(id) != SEALED || isIndexed) {
                    bad.add("block " + id + " TWIN but state " + b.state(id) + " INDEXED=" + isIndexed + " in twins "
                            + twins.contains(id));
                }
            }
            if (cache.policy.contains(id)) {
                candidates++;
            }
        }
        if (hasLower) {
            cache.disks.check(bad);
        }
        if (hasLower && pinned != b.diskPins.size()) {
            bad.add("disk pins recorded " + b.diskPins.size() + " != DISK_PINNED ids " + pinned); // a free id's among them
        }
        if (twinCount != twins.size()) {
            bad.add("TWIN blocks " + twinCount + " != twins held " + twins.size());
        }
        if (resident + admission.reservedAndLateSlots() != slots.usedCount()) {
            bad.add("resident " + resident + " + " + admission.describeReserved() + " != slots used "
                    + slots.usedCount());
        }
        if (indexed != index.size()) {
            bad.add("indexed blocks " + indexed + " != index size " + index.size());
        }
        if (candidates != cache.policy.size()) {
            bad.add("policy size " + cache.policy.size() + " != candidates found " + candidates);
        }
        return bad;
    }

    private static void addIf(List<String> bad, String prefix, String problem) {
        if (!problem.isEmpty()) {
            bad.add(prefix + problem);
        }
    }
}
