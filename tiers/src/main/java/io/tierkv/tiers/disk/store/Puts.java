package io.tierkv.tiers.disk.store;

import java.lang.foreign.MemorySegment;

/**
 * The spill path's decisions, under the tier's lock: a record already under the key is kept if it
 * holds the same identity (the put is done) and refuses the put if it holds another (a hash
 * collision: the caller keeps its bytes); a damaged one (quarantined by the compare) is written
 * anew; a first sighting may be declined by the second-sight admission filter; then the write
 * ({@link RecordWriter}) and, when asked, the pin.
 *
 * <p>Not thread-safe: used under the disk tier's lock.
 */
final class Puts {

    /** {@link #put}'s answer for a block held without a pin (only a pinned record has a serial). */
    static final long STORED_UNPINNED = -1;

    private final RecordIndex index;
    private final SpaceManager space;
    private final RecordWriter writer;
    private final RecordReader reader;
    private final DiskCounters counters;
    private final AdmissionFilter admission;

    /**
     * @param admission the second-sight filter, or null to admit every block
     */
    Puts(RecordIndex index, SpaceManager space, RecordWriter writer, RecordReader reader, DiskCounters counters,
            AdmissionFilter admission) {
        this.index = index;
        this.space = space;
        this.writer = writer;
        this.reader = reader;
        this.counters = counters;
        this.admission = admission;
    }

    /** {@return heap bytes of the admission filter's bits, 0 without a filter} */
    long admissionBytes() {
        return admission == null ? 0 : admission.heapBytes();
    }

    /**
     * Stores a block unless its key holds it already, and pins its record if asked. A pinning put
     * (the block is referenced and the record is about to be its only copy) also verifies a
     * matching record's payload; other puts trust it.
     *
     * @return when pinning, the pin ({@link RecordIndex#serial}) on the record that holds the block
     *     now; otherwise {@link #STORED_UNPINNED}; {@link DiskTier#NO_PIN} if nothing holds it
     *     (declined by the filter, or another identity's record holds the key)
     */
    long put(long hi, long lo, MemorySegment identity, int tokenCount, MemorySegment block, boolean pin) {
        if (!stored(hi, lo, identity, tokenCount, block, pin)) {
            return DiskTier.NO_PIN;
        }
        if (!pin) {
            return STORED_UNPINNED;
        }
        int slot = index.find(hi, lo);
        space.pin(slot);
        return index.serial(slot);
    }

    private boolean stored(long hi, long lo, MemorySegment identity, int tokenCount, MemorySegment block,
            boolean pin) {
        if (index.find(hi, lo) != RecordIndex.NONE) {
            int found = reader.compare(hi, lo, identity, pin);
            if (found == 0) {
                counters.putsExisting++;
                return true;
            }
            if (found == DiskTier.COLLISION) {
                return false; // another block's record: kept, and this block keeps its own bytes
            }
        }
        if (admission != null && !admission.admit(hi, lo)) {
            counters.admissionRejects++;
            return false;
        }
        writer.write(hi, lo, identity, tokenCount, block);
        return true;
    }
}
