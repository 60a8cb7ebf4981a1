package io.tierkv.tiers.disk.store;

/**
 * Pins on a disk tier's records ({@link DiskTier#pinning()}): the manager pins the record of a
 * block an open sequence references, since the record may be that block's only copy. A pin names
 * one record by the serial of its pinning (given with the record's first pin, kept while it holds
 * any), so it never releases another record that came to hold the same key;
 * a pinned record is never a victim for room, by budget or by {@link DiskMaintenance#evict};
 * removal and quarantine still drop it and leave broken pins, each released by its holder's
 * {@link #unpin}. See {@link DiskTier}, "Eviction and compaction". Thread-safe: every method
 * takes the tier's lock, except {@link #pinBroken}.
 */
public final class RecordPins {

    private final DiskTier t;

    RecordPins(DiskTier t) {
        this.t = t;
    }

    /**
     * Pins a key's record: until its last pin is dropped it is never evicted, neither for room
     * (a {@code put} that could only make room by evicting pinned records is refused instead) nor
     * by {@link DiskMaintenance#evict}. Pins count: each call needs its own {@link #unpin}. Removal and
     * quarantine (a record that fails verification) still drop a pinned record; its pins become
     * broken pins ({@link #pinBroken}), still to be released. Pins live in memory only; a restart
     * starts without any.
     *
     * @param hashHi block hash, high 64 bits
     * @param hashLo block hash, low 64 bits
     * @return the pin: the serial of the record's pinning, {@code > 0}, the same for every pin taken
     *     while the record holds one (a record pinned again after its last pin went gets a new
     *     one); {@link DiskTier#NO_PIN} if the key is
     *     not on disk
     * @throws IllegalStateException if the tier is closed
     */
    public long pin(long hashHi, long hashLo) {
        t.lock.lock();
        try {
            t.ensureOpen();
            int slot = t.index.find(hashHi, hashLo);
            if (slot == RecordIndex.NONE) {
                return DiskTier.NO_PIN;
            }
            t.space.pin(slot);
            return t.index.serial(slot);
        } finally {
            t.lock.unlock();
        }
    }

    /**
     * Releases a pin taken by {@link #pin} or {@link DiskTier#putPinned}: from its record if that is still
     * on disk (its last pin makes it evictable again, as most recently used), else the broken pin
     * its removal or quarantine left. Never touches another record under the same key.
     *
     * @param hashHi block hash, high 64 bits
     * @param hashLo block hash, low 64 bits
     * @param pin    the pin, as {@code pin} or {@code putPinned} returned it for this key
     * @return true if a pin was dropped from its record; false if the record was gone and its
     *     broken pin was released
     * @throws IllegalStateException if the pin holds nothing (released twice, or never taken), or
     *     the tier is closed
     */
    public boolean unpin(long hashHi, long hashLo, long pin) {
        t.lock.lock();
        try {
            t.ensureOpen();
            int slot = t.index.find(hashHi, hashLo);
            if (slot != RecordIndex.NONE && t.index.serial(slot) == pin) {
                t.space.unpin(slot);
                return true;
            }
            if (t.space.releaseBrokenPin(pin)) {
                return false;
            }
            throw new IllegalStateException("pin " + pin + " of block " + Long.toHexString(hashHi)
                    + Long.toHexString(hashLo) + " holds nothing: its record "
                    + (slot == RecordIndex.NONE ? "is gone" : t.index.pins(slot) == 0 ? "is at pin count 0"
                            : "is pinned under serial " + t.index.serial(slot) + " now")
                    + " and no broken pin is left under it (released twice, or never taken)");
        } finally {
            t.lock.unlock();
        }
    }

    /**
     * Whether a pin's record was dropped (removed, or quarantined when it failed verification)
     * while the pin was held: the pin is broken, the block's copy here is gone, and the pin still
     * waits for its {@link #unpin}. Answered without the tier's lock, from a record the dropping
     * call made before it released the lock; for a pin still held (a released pin answers false).
     * Also after close.
     *
     * @param pin a pin held
     * @return true if the pinned record is gone
     */
    @SuppressWarnings("GuardedBy") // by design without the lock: SpaceManager's broken pins are a ConcurrentHashMap
    public boolean pinBroken(long pin) {
        return t.space.isBroken(pin);
    }

    /**
     * Checks, under one lock, that the pins its holders believe they hold are exactly the tier's
     * pins: each handle holds as many pins (on its record if that is still on disk, else broken
     * pins under it) as it has holders, every pinned record is one of the handles, and every
     * broken pin belongs to one. For the invariant check of the tier's only pin holder, the host
     * tier; every pin it holds must be passed, each handle once.
     *
     * @param hashHi  per handle, its key's high 64 bits
     * @param hashLo  per handle, its key's low 64 bits
     * @param pins    the distinct pin handles held
     * @param holders per handle, how many holders hold it
     * @param n       handles in the arrays
     * @return a description of the first difference, or null if they agree
     * @throws IllegalStateException if the tier is closed
     */
    public String checkPins(long[] hashHi, long[] hashLo, long[] pins, int[] holders, int n) {
        t.lock.lock();
        try {
            t.ensureOpen();
            int liveRecords = 0;
            int broken = 0;
            for (int i = 0; i < n; i++) {
                int slot = t.index.find(hashHi[i], hashLo[i]);
                boolean live = slot != RecordIndex.NONE && t.index.serial(slot) == pins[i];
                int held = live ? t.index.pins(slot) : t.space.brokenPins(pins[i]);
                if (held != holders[i]) {
                    return "pin " + pins[i] + " of block " + Long.toHexString(hashHi[i]) + Long.toHexString(hashLo[i])
                            + " has " + holders[i] + " holders but " + held + (live ? " pins on its record"
                                    : " broken pins left");
                }
                if (live) {
                    liveRecords++;
                } else {
                    broken += held;
                }
            }
            if (liveRecords != t.index.pinnedCount() || broken != t.space.brokenPinCount()) {
                return "holders hold pins on " + liveRecords + " records and " + broken + " broken pins, but the tier"
                        + " has " + t.index.pinnedCount() + " pinned records and " + t.space.brokenPinCount()
                        + " broken pins";
            }
            return null;
        } finally {
            t.lock.unlock();
        }
    }

    /**
     * Broken pins not released yet: pins whose record was removed or quarantined while they were
     * held.
     *
     * @return pins, {@code >= 0}
     */
    public int brokenPins() {
        t.lock.lock();
        try {
            return t.space.brokenPinCount();
        } finally {
            t.lock.unlock();
        }
    }

    /**
     * Pins held on a key's record.
     *
     * @param hashHi block hash, high 64 bits
     * @param hashLo block hash, low 64 bits
     * @return the pin count, {@code >= 0}, or -1 if the record is absent
     * @throws IllegalStateException if the tier is closed
     */
    public int pins(long hashHi, long hashLo) {
        t.lock.lock();
        try {
            t.ensureOpen();
            int slot = t.index.find(hashHi, hashLo);
            return slot == RecordIndex.NONE ? -1 : t.index.pins(slot);
        } finally {
            t.lock.unlock();
        }
    }
}
