package io.tierkv.tiers.disk.store;

import io.tierkv.core.event.KvMedium;

import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.tiers.disk.DiskOptions;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Room for records, and records leaving: finds a segment with room for a new record (recycling,
 * creating, compacting or evicting as {@link DiskTier} describes) and drops records from the
 * index (journaling the deletion in persistent mode, updating live counts, deleting a segment
 * that emptied, queueing the key for the eviction listener).
 *
 * <p>Pinned records ({@link #pin}) are never evicted. Before it evicts anything for room,
 * {@link #allocate} checks that some segment could hold the record once every unpinned record in
 * it were gone ({@code capacity - header - pinnedBytes >= recordLength}) or that the budget allows
 * a new segment; if not, it refuses with {@link CapacityExhaustedException} and evicts nothing. A
 * segment whose live records are all pinned is compacted as soon as that frees enough room, since
 * eviction can no longer empty it.
 *
 * <p>Broken pins: a pinned record still leaves when it is removed or fails verification. Its pins
 * do not vanish with it: each becomes a <em>broken pin</em>, kept under its pin's serial until
 * its holder releases it ({@link #releaseBrokenPin}), so a holder that has not heard of the loss
 * yet can neither unpin another record under the same key nor lose count. Whether a pin is broken
 * can be asked without the tier's lock ({@link #isBroken}): the entry is made before the lock that
 * dropped the record is released.
 *
 * <p>Eviction against compaction: a segment is compacted to make room only when its live bytes
 * plus the bytes evicted from it since its last compaction ({@link Segment#keptRatio()}) fall below
 * {@link DiskOptions#compactBelowLiveRatio()}; bytes freed by eviction lie next to the records next
 * in line for eviction, so moving those records would be paid twice. A segment that eviction
 * empties while making room is recycled in place as the active segment.
 *
 * <p>Not thread-safe: used under the disk tier's lock.
 */
final class SpaceManager {

    /**
     * Why a record is dropped: {@code EVICT} by {@link DiskMaintenance#evict} or recovery,
     * {@code ROOM_EVICT} by {@link #allocate} (which recycles a segment that emptied),
     * {@code REMOVE} by the caller, {@code QUARANTINE} on a failed load,
     * {@code COMPACTION_QUARANTINE} during compaction.
     */
    enum Cause { EVICT, ROOM_EVICT, REMOVE, QUARANTINE, COMPACTION_QUARANTINE }

    private final DiskOptions options;
    private final RecordIndex index;
    private final SegmentTable segments;
    private final Compactor compactor;
    private final DiskCounters counters;
    private final EvictionNotices notices;
    private final Departures departures;
    private DeletionJournal journal;
    /** Record serial to pins still held on it after the record was dropped; written under the tier's lock. */
    private final ConcurrentHashMap<Long, Integer> brokenPins = new ConcurrentHashMap<>();

    /**
     * Creates the space manager of a tier.
     *
     * @param options   the options (budget, segment size, compaction ratio)
     * @param index     the record index
     * @param segments  the segment table
     * @param compactor the compactor
     * @param counters  the tier's counters
     * @param notices   where dropped keys are queued for the listener
     * @param departures where evicted records are handed to the tier below before they go
     */
    SpaceManager(DiskOptions options, RecordIndex index, SegmentTable segments, Compactor compactor,
                 DiskCounters counters, EvictionNotices notices, Departures departures) {
        this.departures = departures;
        this.options = options;
        this.index = index;
        this.segments = segments;
        this.compactor = compactor;
        this.counters = counters;
        this.notices = notices;
    }

    /**
     * Starts journaling deletions (persistent mode, once recovery wrote the journal).
     *
     * @param j the journal
     */
    void attachJournal(DeletionJournal j) {
        this.journal = j;
    }

    /**
     * The deletion journal.
     *
     * @return the journal, or null when not persistent (or before recovery created it)
     */
    DeletionJournal journal() {
        return journal;
    }

    /**
     * Finds a segment with {@code recordLength} bytes free at its high-water mark.
     *
     * @param recordLength the record's length on disk
     * @param hi           the record's hash, high 64 bits (for the message)
     * @param lo           the record's hash, low 64 bits (for the message)
     * @return the segment to append at, the active one now
     * @throws io.tierkv.core.error.DiskFullException if a new segment was needed and could not be
     *     reserved
     * @throws CapacityExhaustedException if pinned records hold so much of every segment that no
     *     eviction could make room (nothing was evicted; counted in {@code pinRefusals})
     * @throws IllegalStateException if nothing is left to evict and the record still does not fit
     */
    Segment allocate(long recordLength, long hi, long lo) {
        while (true) {
            Segment active = segments.active();
            if (active != null) {
                if (active.freeTailBytes() >= recordLength) {
                    return active;
                }
                active.sealed = true;
                segments.setActive(null);
                if (active.liveRecords == 0) {
                    segments.delete(active);
                }
            }
            Segment roomy = null;
            for (int i = 0; i < segments.slotCount(); i++) {
                Segment s = segments.at(i);
                if (s != null && !s.sealed && s.freeTailBytes() >= recordLength
                        && (roomy == null || s.freeTailBytes() > roomy.freeTailBytes())) {
                    roomy = s;
                }
            }
            if (roomy != null) {
                segments.setActive(roomy);
                continue;
            }
            if (segments.usedBytes + options.segmentBytes() <= options.budgetBytes()) {
                segments.setActive(segments.create());
                continue;
            }
            Segment best = null;
            for (int i = 0; i < segments.slotCount(); i++) {
                Segment s = segments.at(i);
                if (s != null && s.capacity - DiskFormat.SEGMENT_HEADER_BYTES - s.liveBytes >= recordLength
                        && (best == null || s.keptRatio() < best.keptRatio())) {
                    best = s;
                }
            }
            if (best != null && best.keptRatio() < options.compactBelowLiveRatio()) {
                if (compact(best)) {
                    segments.setActive(best);
                }
                continue;
            }
            if (index.size() == 0) {
                throw new IllegalStateException("disk tier cannot make room for a " + recordLength + " B record: "
                        + "no records left to evict, " + segments.usedBytes + " B used of " + options.budgetBytes()
                        + " (block " + Long.toHexString(hi) + Long.toHexString(lo) + ")");
            }
            if (!roomPossible(recordLength)) {
                counters.pinRefusals++;
                throw new CapacityExhaustedException("DISK", 1, 0, "no segment can hold a " + recordLength
                        + " B record without evicting pinned records: " + index.pinnedCount() + " pinned records, "
                        + segments.usedBytes + " B used of budget " + options.budgetBytes() + " B (block "
                        + Long.toHexString(hi) + Long.toHexString(lo) + ")");
            }
            int victim = index.leastRecent();
            if (victim == RecordIndex.NONE) { // every record left is pinned, and one segment has room between them
                Segment roomiest = mostReclaimable();
                if (compact(roomiest)) {
                    segments.setActive(roomiest);
                }
                continue;
            }
            Segment from = segments.at(index.segment[victim]);
            drop(victim, Cause.ROOM_EVICT);
            if (from.liveRecords == 0 && segments.at(from.slot) == from) {
                segments.recycle(from);
                segments.setActive(from);
            } else if (from.liveBytes == from.pinnedBytes && reclaimable(from) >= recordLength
                    && segments.at(from.slot) == from && compact(from)) {
                segments.setActive(from); // only pinned records left in it: eviction cannot empty it
            }
        }
    }

    /** Whether some segment could hold {@code recordLength} bytes once its unpinned records were gone. */
    private boolean roomPossible(long recordLength) {
        for (int i = 0; i < segments.slotCount(); i++) {
            Segment s = segments.at(i);
            if (s != null && s.capacity - DiskFormat.SEGMENT_HEADER_BYTES - s.pinnedBytes >= recordLength) {
                return true;
            }
        }
        return false;
    }

    /** Bytes compaction would free in a segment: its record space less its live bytes. */
    private static long reclaimable(Segment s) {
        return s.capacity - DiskFormat.SEGMENT_HEADER_BYTES - s.liveBytes;
    }

    private Segment mostReclaimable() {
        Segment best = null;
        for (int i = 0; i < segments.slotCount(); i++) {
            Segment s = segments.at(i);
            if (s != null && (best == null || reclaimable(s) > reclaimable(best))) {
                best = s;
            }
        }
        return best;
    }

    /**
     * Pins a record: it is not evicted for room, by budget or by {@link DiskMaintenance#evict} until its
     * last pin goes (removal and quarantine still drop it).
     *
     * @param slot a live slot
     */
    void pin(int slot) {
        if (index.pin(slot)) {
            segments.at(index.segment[slot]).pinnedBytes += index.length[slot];
        }
    }

    /**
     * Drops a pin; the record's last pin makes it evictable again, as most recently used.
     *
     * @param slot a live slot holding a pin
     * @throws IllegalStateException if it holds none
     */
    void unpin(int slot) {
        if (index.unpin(slot)) {
            segments.at(index.segment[slot]).pinnedBytes -= index.length[slot];
        }
    }

    /**
     * Whether a pin's record was dropped (removed or quarantined) while the pin was held, and the
     * pin has not been released since. Safe without the tier's lock.
     *
     * @param serial the pinned record's serial
     * @return true if broken pins remain under that serial
     */
    boolean isBroken(long serial) {
        return brokenPins.containsKey(serial);
    }

    /**
     * Releases one broken pin.
     *
     * @param serial the dropped record's serial
     * @return false if no broken pin is left under that serial
     */
    boolean releaseBrokenPin(long serial) {
        Integer left = brokenPins.get(serial);
        if (left == null) {
            return false;
        }
        if (left == 1) {
            brokenPins.remove(serial);
        } else {
            brokenPins.put(serial, left - 1);
        }
        return true;
    }

    /**
     * Broken pins left under a serial.
     *
     * @param serial a record serial
     * @return pins, {@code >= 0}
     */
    int brokenPins(long serial) {
        return brokenPins.getOrDefault(serial, 0);
    }

    /** {@return broken pins not released yet, over every serial} */
    int brokenPinCount() {
        int n = 0;
        for (int p : brokenPins.values()) {
            n += p;
        }
        return n;
    }

    /**
     * Compacts a segment in place (see {@link Compactor}); records whose header fails
     * verification on the way are quarantined.
     *
     * @param seg a segment in the table
     * @return false if it ended up empty and was deleted
     */
    boolean compact(Segment seg) {
        return compactor.compact(seg, slot -> drop(slot, Cause.COMPACTION_QUARANTINE));
    }

    /**
     * Drops a live record: journals it (persistent; not for {@code COMPACTION_QUARANTINE}, whose
     * segment gets a new nonce), updates counts, turns its pins into broken pins (only removal and
     * quarantine drop a pinned record), deletes its segment if that emptied it (not for
     * {@code ROOM_EVICT}, whose caller recycles it, nor {@code COMPACTION_QUARANTINE}), and queues
     * the key for the listener (all causes but {@code REMOVE}).
     *
     * @param slot  the record's index slot
     * @param cause why
     */
    void drop(int slot, Cause cause) {
        long hi = index.hashHi[slot];
        long lo = index.hashLo[slot];
        if (journal != null && cause != Cause.COMPACTION_QUARANTINE) {
            ensureJournalRoom();
            if (!index.isLive(slot) || index.hashHi[slot] != hi || index.hashLo[slot] != lo) {
                return; // the compaction that made room quarantined this very record
            }
            Segment seg = segments.at(index.segment[slot]);
            journal.append(seg.nonce, index.offset[slot], hi, lo);
        }
        if (cause == Cause.EVICT || cause == Cause.ROOM_EVICT) {
            departures.handOff(slot); // before its bytes can be reused
        }
        Segment seg = segments.at(index.segment[slot]);
        long len = index.length[slot];
        if (index.pins(slot) > 0) { // removal or quarantine: pins do not keep bytes that failed verification
            seg.pinnedBytes -= len;
            brokenPins.merge(index.serial(slot), index.pins(slot), Integer::sum);
        }
        seg.liveBytes -= len;
        seg.liveRecords--;
        counters.liveBytes -= len;
        index.remove(slot);
        index.events.blockRemoved(KvMedium.DISK, hi, lo);
        switch (cause) {
            case EVICT, ROOM_EVICT -> {
                counters.evictions++;
                seg.evictedBytes += len;
            }
            case REMOVE -> counters.removals++;
            default -> counters.quarantined++;
        }
        if (cause != Cause.REMOVE) {
            notices.add(hi, lo);
        }
        if (seg.liveRecords == 0 && seg != segments.active() && cause != Cause.COMPACTION_QUARANTINE
                && cause != Cause.ROOM_EVICT) {
            segments.delete(seg);
        }
    }

    /**
     * Makes room for one journal entry: drops obsolete entries, and if that is not enough,
     * compacts every segment with dead bytes (the dead records the journal still names sit in
     * them; new nonces make every entry about them obsolete) and drops again.
     */
    void ensureJournalRoom() {
        if (journal.count() < journal.capacity()) {
            return;
        }
        journal.compact(segments.liveNonces()::contains);
        if (journal.count() * 4 > journal.capacity() * 3) {
            for (int i = 0; i < segments.slotCount(); i++) {
                Segment s = segments.at(i);
                if (s != null && Compactor.deadBytes(s) > 0) {
                    compact(s);
                }
            }
            journal.compact(segments.liveNonces()::contains);
        }
    }
}
