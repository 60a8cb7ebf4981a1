package io.tierkv.tiers;


import static io.tierkv.tiers.HostBlocks.MOVING;
import static io.tierkv.tiers.HostBlocks.QUEUED;

/** Recounts the host tier's structure from scratch, atomically under its lock. */
final class HostInvariants {

    private HostInvariants() {
    }

    /**
     * Host-side invariants: free + used == capacity, no slot twice, the policy holds exactly the
     * host-resident blocks that are neither moving nor queued for a spill. The disk copies and
     * their pins are the cache's to check ({@code DiskCopies#check}).
     *
     * @return violations, empty when consistent
     */
    static java.util.List<String> check(HostTier t) {
        HostBlocks h = t.blocks;
        h.lock.lock();
        try {
            java.util.List<String> bad = new java.util.ArrayList<>();
            String s = h.slots.check();
            if (!s.isEmpty()) {
                bad.add("host slots: " + s);
            }
            int resident = 0;
            int parked = t.lateCopies.parkedHostSlots();
            boolean[] seen = new boolean[h.slots.capacity()];
            for (int id = 0; id < h.maxBlocks; id++) {
                int hs = h.hostSlot(id);
                if (hs < 0) {
                    if (h.policy.contains(id)) {
                        bad.add("block " + id + " in host policy without a host slot");
                    }
                    continue;
                }
                resident++;
                if (seen[hs]) {
                    bad.add("host slot " + hs + " held twice");
                }
                seen[hs] = true;
                if (!h.slots.isAllocated(hs)) {
                    bad.add("block " + id + " host slot " + hs + " not allocated");
                }
                boolean out = h.is(id, MOVING | QUEUED);
                if (out == h.policy.contains(id)) {
                    bad.add("block " + id + " moving or queued=" + out + " but in host policy=" + h.policy.contains(id));
                }
            }
            if (resident + parked + h.reservedHostSlots + h.orphanedSlots != h.slots.usedCount()) {
                bad.add("host resident " + resident + " + parked " + parked + " + reserved " + h.reservedHostSlots
                        + " + orphaned " + h.orphanedSlots + " != used " + h.slots.usedCount());
            }
            return bad;
        } finally {
            h.lock.unlock();
        }
    }
}
