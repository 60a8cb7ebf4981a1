package io.tierkv.tiers.disk;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * Opening a persistent tier's directory: rebuilds the index from the record headers of every
 * segment file plus the deletion journal, then rewrites the journal and keeps the budget.
 *
 * <p>Per segment file, oldest id first: a file shorter than a segment header or longer than the
 * largest segment, or whose header fails verification or names another id, is deleted (counted in
 * {@link DiskStats#droppedSegments()}). Otherwise its records are scanned from the first one up to
 * the high-water mark (the whole file when the mark's checksum fails): a valid header with the
 * segment's nonce is indexed unless the journal deleted it or its key is indexed already; a stale
 * nonce (a record from before a compaction or recycling) is skipped by its length; damaged bytes
 * are skipped 64 bytes at a time, each damaged run counted once in
 * {@link DiskStats#recoveryFaults()} (zero bytes past a lost mark are not damage). The mark is
 * rewritten to the end of the last valid record; a segment with nothing live is deleted. Bytes past
 * the end of a truncated file count as torn. Payload checksums are verified on first read, not
 * here. Recovered records enter the LRU list oldest segment first, as least recently used.
 *
 * <p>Then journal entries naming no open segment are dropped and the journal is rewritten (with
 * room for at least the configured capacity), and records are evicted, least recent first, while
 * the files exceed the budget.
 *
 * <p>Not thread-safe: used once, by {@link DiskTier#open}.
 */
final class Recovery {

    /** A journal entry, as a set member. */
    private record Deleted(long nonce, long offset, long hashHi, long hashLo) {}

    private final TierDirectory directory;
    private final DiskOptions options;
    private final RecordRules rules;
    private final CRC32C crc;
    private final RecordIndex index;
    private final SegmentTable segments;
    private final SpaceManager space;
    private final DiskCounters counters;
    private final CorruptionLog log;

    /**
     * Creates the recovery of a tier.
     *
     * @param directory the locked directory
     * @param options   the options
     * @param rules     what a valid record looks like
     * @param crc       the tier's checksum object
     * @param index     the (empty) record index
     * @param segments  the (empty) segment table
     * @param space     the space manager, which receives the journal
     * @param counters  the tier's counters
     * @param log       the tier's log of damaged bytes
     */
    Recovery(TierDirectory directory, DiskOptions options, RecordRules rules, CRC32C crc, RecordIndex index,
             SegmentTable segments, SpaceManager space, DiskCounters counters, CorruptionLog log) {
        this.log = log;
        this.directory = directory;
        this.options = options;
        this.rules = rules;
        this.crc = crc;
        this.index = index;
        this.segments = segments;
        this.space = space;
        this.counters = counters;
    }

    /**
     * Recovers the directory's segments and creates the journal.
     *
     * @param journalCapacity the journal's configured capacity in entries
     * @throws io.tierkv.core.error.DiskFullException if the journal's space cannot be reserved
     * @throws UncheckedIOException if a segment cannot be opened or mapped
     */
    void run(long journalCapacity) {
        Path dir = directory.path();
        long[] entries = DeletionJournal.readEntries(dir.resolve(DiskFormat.JOURNAL_FILE), rules.fingerprint());
        Set<Deleted> deleted = new HashSet<>();
        for (int i = 0; i + 3 < entries.length; i += 4) {
            deleted.add(new Deleted(entries[i], entries[i + 1], entries[i + 2], entries[i + 3]));
        }
        List<Path> files = new ArrayList<>();
        for (Path p : directory.ownFiles()) {
            String name = p.getFileName().toString();
            if (name.endsWith(DiskFormat.TEMP_SUFFIX)) {
                DiskFiles.deleteQuietly(p); // an interrupted journal or metadata rewrite
            } else if (DiskFormat.segmentIdOf(name) >= 0) {
                files.add(p);
            }
        }
        files.sort((a, b) -> Integer.compare(DiskFormat.segmentIdOf(a.getFileName().toString()),
                DiskFormat.segmentIdOf(b.getFileName().toString())));
        for (Path file : files) {
            int id = DiskFormat.segmentIdOf(file.getFileName().toString());
            segments.sawSegmentId(id);
            recoverSegment(file, id, deleted);
        }
        Set<Long> nonces = segments.liveNonces();
        long[] keep = new long[entries.length];
        int k = 0;
        for (int i = 0; i + 3 < entries.length; i += 4) {
            if (nonces.contains(entries[i])) {
                System.arraycopy(entries, i, keep, k, 4);
                k += 4;
            }
        }
        long capacity = Math.max(journalCapacity, k / 4);
        DeletionJournal journal = DeletionJournal.create(dir, rules.fingerprint(), capacity, Arrays.copyOf(keep, k));
        space.attachJournal(journal);
        segments.usedBytes += journal.fileBytes();
        while (segments.usedBytes > options.budgetBytes() && index.size() > 0) {
            space.drop(index.leastRecent(), SpaceManager.Cause.EVICT);
        }
        if (journal.count() * 4 > journal.capacity() * 3) {
            space.ensureJournalRoom();
        }
    }

    private void recoverSegment(Path file, int id, Set<Deleted> deleted) {
        FileChannel ch = null;
        Arena arena = null;
        try {
            ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            long size = ch.size();
            if (size < DiskFormat.SEGMENT_HEADER_BYTES || size > DiskOptions.MAX_SEGMENT_BYTES) {
                ch.close();
                dropSegmentFile(file, size < DiskFormat.SEGMENT_HEADER_BYTES ? "shorter than a segment header"
                        : "larger than the largest segment");
                return;
            }
            arena = Arena.ofShared();
            MemorySegment map = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            SegmentTable.adviseRandom(map);
            int status = DiskFormat.checkSegmentHeader(map, crc, size, rules.fingerprint());
            if (status != DiskFormat.VALID || map.get(DiskFormat.INT, DiskFormat.SEG_ID) != id) {
                arena.close();
                ch.close();
                dropSegmentFile(file, status == DiskFormat.VALID ? "id differs from the file name"
                        : DiskFormat.reason(status));
                return;
            }
            Segment seg = new Segment(id, file, arena, ch, map, map.get(DiskFormat.LONG, DiskFormat.SEG_NONCE));
            long headerBytes = map.get(DiskFormat.LONG, DiskFormat.SEG_BYTES);
            long hwm = DiskFormat.readHighWaterMark(map, crc);
            boolean hwmTrusted = hwm >= DiskFormat.SEGMENT_HEADER_BYTES;
            if (!hwmTrusted) {
                fault(file, DiskFormat.SEG_HWM, "high-water mark damaged: scanning the whole file");
            }
            long limit = hwmTrusted ? Math.min(hwm, size) : size;
            if (size < headerBytes) {
                if (hwmTrusted && hwm > size) {
                    fault(file, size, "truncated to " + size + " B, records written up to " + hwm);
                }
            }
            segments.add(seg);
            segments.usedBytes += size;
            long end = scanRecords(seg, limit, hwmTrusted, deleted);
            if (seg.liveRecords == 0) {
                segments.delete(seg);
                return;
            }
            seg.highWaterMark = end;
            seg.writtenBytes = end;
            DiskFormat.writeHighWaterMark(map, crc, end);
        } catch (IOException e) {
            if (arena != null && arena.scope().isAlive()) {
                arena.close();
            }
            if (ch != null) {
                try {
                    ch.close();
                } catch (IOException ignored) {
                    // already failing
                }
            }
            throw new UncheckedIOException("cannot recover segment " + file
                    + " (if mapping failed, check vm.max_map_count and the address-space limit)", e);
        }
    }

    /** Indexes the valid records of a recovered segment; returns the end of the last valid one. */
    private long scanRecords(Segment seg, long limit, boolean hwmTrusted, Set<Deleted> deleted) {
        MemorySegment map = seg.map;
        long pos = DiskFormat.SEGMENT_HEADER_BYTES;
        long end = pos;
        boolean inFault = false;
        while (pos + DiskFormat.RECORD_HEADER_BYTES <= limit) {
            int status = rules.check(map, pos, limit, crc, seg.nonce);
            if (status == DiskFormat.VALID) {
                inFault = false;
                long len = DiskFormat.recordBytesAt(map, pos);
                long hi = DiskFormat.recordHashHi(map, pos);
                long lo = DiskFormat.recordHashLo(map, pos);
                if (!deleted.contains(new Deleted(seg.nonce, pos, hi, lo)) && index.find(hi, lo) == RecordIndex.NONE) {
                    index.insert(hi, lo, seg.slot, pos, len);
                    seg.liveBytes += len;
                    seg.liveRecords++;
                    counters.liveBytes += len;
                    counters.recoveredBlocks++;
                }
                pos += len;
                end = pos;
            } else if (status == DiskFormat.STALE_NONCE) {
                inFault = false;
                pos += DiskFormat.recordBytesAt(map, pos);
            } else {
                boolean empty = !hwmTrusted && map.get(DiskFormat.LONG, pos) == 0L;
                if (!inFault && !empty) {
                    inFault = true;
                    fault(seg.file, pos, "recovery dropped bytes: " + DiskFormat.reason(status));
                }
                pos += DiskFormat.RECORD_ALIGN_BYTES;
            }
        }
        return end;
    }

    private void fault(Path file, long offset, String reason) {
        counters.recoveryFaults++;
        DiskFaultEvent.emit(file.toString(), offset, reason);
        log.found(CorruptionLog.Kind.RECOVERY, file + " at " + offset, reason);
    }

    private void dropSegmentFile(Path file, String reason) {
        counters.droppedSegments++;
        counters.segmentsDeleted++;
        DiskFaultEvent.emit(file.toString(), -1, "segment dropped: " + reason);
        log.found(CorruptionLog.Kind.SEGMENT, file.toString(), reason);
        DiskFiles.deleteQuietly(file);
    }
}
