package io.tierkv.tiers.disk.store;

import io.tierkv.core.event.KvEventSink;
import io.tierkv.core.event.KvMedium;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.tiers.disk.DiskOptions;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A disk tier's maintenance and inspection operations ({@link DiskTier#maintenance()}): evict by
 * LRU order, compact, visit keys, record sizes, drop cached pages (for cold-read benchmarks),
 * heap bytes by structure; and the wiring a manager sets once at build (who hears of evictions,
 * where evicted records go). Thread-safe: every method but {@link #setEvictionListener} (a volatile
 * write) takes the tier's lock; eviction notices are delivered after it is released, as for
 * {@link DiskTier}'s own calls.
 */
public final class DiskMaintenance {

    private final DiskTier t;

    DiskMaintenance(DiskTier t) {
        this.t = t;
    }

    /**
     * Evicts up to {@code count} least recently used unpinned records, telling the listener about
     * each; pinned records stay.
     *
     * @param count records to evict, {@code >= 0}
     * @return records evicted: {@code min(count, blockCount() - pinned records)}
     * @throws IllegalArgumentException if {@code count < 0}
     * @throws IllegalStateException if the tier is closed
     */
    public int evict(int count) {
        if (count < 0) {
            throw new IllegalArgumentException("count: " + count + " (expected >= 0)");
        }
        int n = 0;
        t.lock.lock();
        try {
            t.ensureOpen();
            while (n < count && t.index.leastRecent() != RecordIndex.NONE) {
                t.space.drop(t.index.leastRecent(), SpaceManager.Cause.EVICT);
                n++;
            }
        } finally {
            t.lock.unlock();
        }
        t.notices.deliver();
        return n;
    }

    /**
     * Visits every key indexed now (recovered ones included), least recently used first. The keys
     * are copied under the lock and visited after it is released, so the visitor may call the
     * tier.
     *
     * @param v the visitor
     * @throws IllegalStateException if the tier is closed
     */
    public void forEachKey(KeyVisitor v) {
        Objects.requireNonNull(v, "v");
        long[] keys;
        t.lock.lock();
        try {
            t.ensureOpen();
            keys = new long[2 * t.index.size()];
            int i = 0;
            for (int slot = t.index.first(); slot != RecordIndex.NONE; slot = t.index.after(slot)) {
                keys[i++] = t.index.hashHi[slot];
                keys[i++] = t.index.hashLo[slot];
            }
        } finally {
            t.lock.unlock();
        }
        for (int i = 0; i < keys.length; i += 2) {
            v.visit(keys[i], keys[i + 1]);
        }
    }

    /**
     * Compacts, in place, every segment whose live ratio is below
     * {@link DiskOptions#compactBelowLiveRatio()} and that holds dead bytes. The tier also does
     * this on its own when it needs room; this is for a maintenance thread.
     *
     * @return segments compacted
     * @throws IllegalStateException if the tier is closed
     */
    public int compact() {
        int n = 0;
        t.lock.lock();
        try {
            t.ensureOpen();
            for (int i = 0; i < t.segments.slotCount(); i++) {
                Segment s = t.segments.at(i);
                if (s != null && s.liveRatio() < t.options.compactBelowLiveRatio() && Compactor.deadBytes(s) > 0) {
                    t.space.compact(s);
                    n++;
                }
            }
        } finally {
            t.lock.unlock();
        }
        t.notices.deliver(); // records quarantined because their header failed verification
        return n;
    }

    /**
     * Bytes of the record stored for a key: header, token ids, payload and padding.
     *
     * @param hashHi block hash, high 64 bits
     * @param hashLo block hash, low 64 bits
     * @return the record's length on disk, or -1 if absent
     * @throws IllegalStateException if the tier is closed
     */
    public long recordBytes(long hashHi, long hashLo) {
        t.lock.lock();
        try {
            t.ensureOpen();
            int slot = t.index.find(hashHi, hashLo);
            return slot == RecordIndex.NONE ? -1 : t.index.length[slot];
        } finally {
            t.lock.unlock();
        }
    }

    /**
     * Payload bytes stored for a key (after compression), read from its record header.
     *
     * @param hashHi block hash, high 64 bits
     * @param hashLo block hash, low 64 bits
     * @return the stored length, or -1 if absent
     * @throws IllegalStateException if the tier is closed
     */
    public long storedPayloadBytes(long hashHi, long hashLo) {
        t.lock.lock();
        try {
            t.ensureOpen();
            int slot = t.index.find(hashHi, hashLo);
            if (slot == RecordIndex.NONE) {
                return -1;
            }
            return RecordHeaders.recordStoredLength(t.segments.at(t.index.segment[slot]).map, t.index.offset[slot]);
        } finally {
            t.lock.unlock();
        }
    }

    /**
     * Makes a key's record cold: writes its dirty pages back ({@code msync}), releases them from
     * this tier's mapping ({@code MADV_DONTNEED}; the file keeps its bytes) and drops them from the
     * page cache ({@code POSIX_FADV_DONTNEED}), rounded out to whole pages, so neighbouring records
     * on the first and last page go too. The next load of the key reads it from the device. For
     * cold-cache measurements ({@code SpillLoadBenchmark}); the tier keeps no note of it, just as
     * it keeps none when the kernel reclaims its pages.
     *
     * @param hashHi block hash, high 64 bits
     * @param hashLo block hash, low 64 bits
     * @return whether the key was on disk
     * @throws IllegalStateException if the tier is closed
     * @throws UncheckedIOException  if the write-back or the advice failed (the message names the
     *                               file, the range and the errno)
     */
    public boolean dropCachedPages(long hashHi, long hashLo) {
        t.lock.lock();
        try {
            t.ensureOpen();
            int slot = t.index.find(hashHi, hashLo);
            if (slot == RecordIndex.NONE) {
                return false;
            }
            SegmentTable.dropCachedPages(t.segments.at(t.index.segment[slot]), t.index.offset[slot], t.index.length[slot]);
            return true;
        } finally {
            t.lock.unlock();
        }
    }

    /**
     * Makes every segment cold, as {@link #dropCachedPages(long, long)} does for one record: the
     * next spill into a page this tier wrote before, and the next load, find it on the device
     * only. Writes back every dirty page first. For cold-cache measurements.
     *
     * @throws IllegalStateException if the tier is closed
     * @throws UncheckedIOException  as {@link #dropCachedPages(long, long)}
     */
    public void dropCachedPages() {
        t.lock.lock();
        try {
            t.ensureOpen();
            for (int i = 0; i < t.segments.slotCount(); i++) {
                Segment seg = t.segments.at(i);
                if (seg != null) {
                    SegmentTable.dropCachedPages(seg, 0, seg.capacity);
                }
            }
        } finally {
            t.lock.unlock();
        }
    }

    /**
     * Sets where this tier's KV events go ({@link io.tierkv.core.event.KvMedium#DISK}: a record is
     * findable while it is indexed) and reports every record indexed now, the ones recovered at
     * open included, as stored. Later writes report a store; evictions, removals and quarantines
     * a removal. The sink is called with this tier's lock held.
     *
     * @param sink the sink; {@link io.tierkv.core.event.KvEventSink#NONE} for none
     * @throws NullPointerException  if sink is null
     * @throws IllegalStateException if the tier is closed
     */
    public void setEventSink(KvEventSink sink) {
        Objects.requireNonNull(sink, "sink");
        t.lock.lock();
        try {
            t.ensureOpen();
            t.index.events = sink;
            if (!sink.enabled()) {
                return;
            }
            for (int slot = t.index.first(); slot != RecordIndex.NONE; slot = t.index.after(slot)) {
                MemorySegment map = t.segments.at(t.index.segment[slot]).map;
                long off = t.index.offset[slot];
                int tokens = RecordHeaders.recordTokenCount(map, off);
                MemorySegment identity = map.asSlice(off + DiskFormat.RECORD_HEADER_BYTES,
                        BlockIdentity.bytes(tokens));
                sink.blockStored(KvMedium.DISK, t.index.hashHi[slot], t.index.hashLo[slot], identity);
            }
        } finally {
            t.lock.unlock();
        }
    }

    /**
     * Heap bytes of the tier's structures that grow with its records, each array counted whole
     * (unused capacity included): the record index's keys (two {@code long} hash halves per
     * slot), locations (segment, offset and length, an {@code int} each), LRU links (two
     * {@code int}s), pinned entries (slot, pin count and serial per pinned record) and hash table
     * ({@code int} entries, at most half full), the admission filter's bits (0 without one) and
     * the segment table's array. Objects of fixed size (the tier's parts, one per segment) are not
     * counted.
     *
     * @return bytes by structure, in that order; keys are stable names for reports
     * @throws IllegalStateException if the tier is closed
     */
    public Map<String, Long> heapBytesByStructure() {
        t.lock.lock();
        try {
            t.ensureOpen();
            Map<String, Long> bytes = new LinkedHashMap<>();
            bytes.put("index keys", t.index.keyBytes());
            bytes.put("index locations", t.index.locationBytes());
            bytes.put("index links", t.index.linkBytes());
            bytes.put("index pinned", t.index.pinnedBytes());
            bytes.put("index table", t.index.tableBytes());
            bytes.put("admission filter", t.puts.admissionBytes());
            bytes.put("segment table", t.segments.heapBytes());
            return bytes;
        } finally {
            t.lock.unlock();
        }
    }

    /**
     * Sets the listener told about keys the tier drops on its own; {@code null} for none. Calls
     * happen after the tier's lock is released, on the thread that caused them.
     *
     * @param l the listener
     */
    public void setEvictionListener(EvictionListener l) {
        t.notices.setListener(l);
    }

    /**
     * Sets the sink handed every record the tier evicts (by budget or {@link #evict}),
     * verified, before its bytes go; {@code null} for none. Records removed on request, quarantined
     * or dropped by recovery are not handed on.
     *
     * @param sink the sink
     * @throws IllegalStateException if the tier is closed
     */
    public void setDepartureSink(DepartureSink sink) {
        t.lock.lock();
        try {
            t.ensureOpen();
            t.departures.setSink(sink);
        } finally {
            t.lock.unlock();
        }
    }
}
