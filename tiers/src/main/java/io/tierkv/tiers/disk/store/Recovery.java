package io.tierkv.tiers.disk.store;

import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.DiskStats;
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
 * the high-water mark (the whole file when the mark's checksum fails). A header is judged against
 * the file's length, never against the mark, so its verdict does not depend on where a mark
 * happens to be. A valid header with the segment's nonce is indexed, if the rules below accept
 * it, unless the journal deleted it or its key is indexed already; a stale nonce (a record from
 * before a compaction or recycling) is skipped by its length, or up to the first valid header
 * inside it, except below a trusted mark, where a record of an ancestor of the segment's nonce is
 * one a compaction interrupted by a crash had not moved ({@link UnmovedRecords}); any other stale
 * record there counts a fault. Damaged bytes are skipped 64 bytes at a time, each damaged run counted once in
 * {@link DiskStats#recoveryFaults()} (zero bytes past a lost mark are not damage). The mark is
 * rewritten to the end of the last accepted record, with that record's offset; a segment with
 * nothing live is deleted. Bytes past the end of a truncated file count as torn. Payload
 * checksums are verified on first read, not here. Recovered records enter the LRU list oldest
 * segment first, as least recently used.
 *
 * <p>The chain. Each record header names the record before it, and the mark names the record
 * that ends at it ({@link DiskFormat}). From a valid or stale header the scan follows the chain,
 * reading headers only: each next record is the one at the end of the last, provided its header
 * is valid and names the last as its predecessor; the chain ends at the first record {@code L}
 * whose successor does not confirm it so. Then, per record of the chain:
 * <ul>
 *   <li>{@code L} is accepted without reading inside it if it ends at the trusted mark and the
 *       mark names it; else if it ends at or below the mark and no valid header starts inside it
 *       (an <em>inside scan</em>, counted in {@link DiskStats#recoveryInsideScans()}). A stale
 *       {@code L} is skipped whole, or up to the first valid header inside it.</li>
 *   <li>An earlier record is accepted without reading inside it if the record after it is
 *       accepted; else (walking back along the previous record offsets) if an inside scan finds no
 *       valid header in it.</li>
 *   <li>The record after the last accepted one, if any, has a damaged length: it runs past the
 *       mark or over the valid header found inside it. It is skipped as damaged and the scan goes
 *       on at that header, the reading that keeps intact records.</li>
 * </ul>
 * A confirmed record needs no inside scan because the writer appends records back to back,
 * header last, each naming the record that ends where it starts, and advances the mark and the
 * last record offset together after each (compaction writes moved records the same way, under a
 * new nonce): a valid header at {@code a + length} that names {@code a} was written right after
 * the record at {@code a} had that length, and nothing but that record's own bytes lies in
 * between. A length re-sealed to end at a later record's header is caught, as that header names
 * another predecessor; so is one that runs past the mark. (What the chain cannot tell from an
 * intact record takes a re-sealed length, a writer bug rather than a bit flip, which the header
 * checksum catches, and a crash: a header written but left beyond the mark by the crash survives
 * a recovery that lowers the mark below it after damage; a record written later at the offset
 * that header names, if its length were then re-sealed to end exactly at that header, would be
 * taken whole, hiding the records its length covers, at every recovery alike.) On an intact
 * segment recovery thus checks one header per record and no byte inside
 * a record. What the device reads is chosen ahead of the walk (see "Reading" below): records up
 * to 64 KiB are read whole, sequentially; longer ones at their header pages only, many requests
 * in flight. Damage costs inside scans of the records
 * next to it only, the damaged one and the one before it, plus the 64-byte steps through the
 * damaged bytes, at this and every later recovery until compaction or recycling rewrites the
 * segment; a lost mark costs a scan of the whole file.
 *
 * <p>Reading. The walk reads file offsets through a {@link RecoveryWindow}. A segment whose first
 * record is at most {@link RecoveryReadAhead#DENSE_RECORD_BYTES} long (or damaged) is read with
 * large sequential positional reads up to the mark into one reused buffer, the headers parsed
 * from there: the sequential read of the files plus the parsing, without a fault per page. A
 * segment of longer records is walked on its mapping with {@link RecoveryReadAhead}'s header
 * pages read ahead. Either way the same headers are checked in the same order: which bytes are
 * read changes no verdict. The members of a chain are kept (offset, length, key) as the walk
 * checks them, so accepting them reads no header twice.
 *
 * <p>Idempotent: recovering the same files twice gives the same index, and nothing skipped can
 * come back or hide an intact record at a later recovery. Every header skipped as damaged that
 * still starts with the record magic gets its magic zeroed in the file, so no later mark (a
 * higher one after appends, or the whole file when the mark is lost) makes it valid again; stale
 * headers stay stale, as a segment never gets an old nonce back. Accepted records keep their
 * headers, and a record is accepted on its successor's word only when that successor is accepted
 * too, so a later recovery finds the same confirmations (the last one in the mark, rewritten to
 * name the last accepted record) or makes the same inside scans with the same outcome. Below the
 * rewritten mark every verdict is therefore final, and appends land above it: recovering again
 * finds the same records plus those appended since.
 *
 * <p>Then journal entries naming no open segment are dropped and the journal is rewritten (with
 * room for at least the configured capacity; a journal that already holds just the entries kept,
 * with that capacity, is opened in place instead, {@link DeletionJournal#reopen}), and records
 * are evicted, least recent first, while the files exceed the budget.
 *
 * <p>Not thread-safe: used once, by {@link DiskTier#open}.
 */
final class Recovery {

    /**
     * Whether a record's successor (or the mark) can confirm its length. Tests switch it off to
     * compare with the recovery that scans inside every record, which must give the same index
     * and leave the same bytes.
     */
    static volatile boolean TRUST_CHAIN = true;

    /** A journal entry, as a set member: a record deleted at this offset of the segment of this nonce. */
    record Deleted(long nonce, long offset, long hashHi, long hashLo) {}

    private final TierDirectory directory;
    private final DiskOptions options;
    private final RecordRules rules;
    private final CRC32C crc;
    private final RecordIndex index;
    private final UnmovedRecords unmoved;
    private final SegmentTable segments;
    private final SpaceManager space;
    private final DiskCounters counters;
    private final CorruptionLog log;

    /**
     * Bytes per read-ahead call on the tier's device ({@link RecoveryReadAhead#adviceBytesFor}),
     * 0 until a segment is first read through its mapping.
     */
    private long adviceBytes;
    /** Read-ahead of the segment being scanned through its mapping; null when it is read through the buffer. */
    private RecoveryReadAhead readAhead;
    /** The bytes the walk reads (the segment's mapping, or a buffer filled by positional reads). */
    private RecoveryWindow window;
    /** The segment being scanned. */
    private Segment seg;
    /** Members of the chain {@link #judgeChain} followed, in file order: offsets, lengths and keys. */
    private long[] chainOffsets = new long[1024];
    private long[] chainLengths = new long[1024];
    private long[] chainHashHi = new long[1024];
    private long[] chainHashLo = new long[1024];
    /** Members in the chain arrays. */
    private int chainSize;
    /** Result of {@link #judgeChain}: the last member accepted, -1 if none. */
    private long accepted;
    /** Result of {@link #judgeChain}: the member after the accepted ones, -1 if every member was. */
    private long rejected;
    /** Result of {@link #judgeChain}: the first valid header inside {@link #rejected}, -1 if none. */
    private long rejectedInner;

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
        this.unmoved = new UnmovedRecords(rules, crc, index);
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
        try (RecoveryWindow w = new RecoveryWindow(RecoveryWindow.CHUNK_BYTES)) {
            window = w;
            recoverAll(journalCapacity);
        } finally {
            window = null;
            seg = null;
        }
    }

    private void recoverAll(long journalCapacity) {
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
        long[] keep = new long[entries.length + 4 * unmoved.rejournaled.size()];
        int k = 0;
        for (int i = 0; i + 3 < entries.length; i += 4) {
            // a live segment's entry, or an ancestor's: its records may still be indexed (UnmovedRecords)
            if (nonces.contains(entries[i]) || SegmentTable.isAncestorOfAny(entries[i], nonces::contains)) {
                System.arraycopy(entries, i, keep, k, 4);
                k += 4;
            }
        }
        for (Deleted d : unmoved.rejournaled) {
            keep[k++] = d.nonce();
            keep[k++] = d.offset();
            keep[k++] = d.hashHi();
            keep[k++] = d.hashLo();
        }
        long capacity = Math.max(journalCapacity, k / 4);
        DeletionJournal journal = k == entries.length && unmoved.rejournaled.isEmpty() // the file may be what create writes
                ? DeletionJournal.reopen(dir, rules.fingerprint(), capacity, k / 4) : null;
        if (journal == null) {
            journal = DeletionJournal.create(dir, rules.fingerprint(), capacity, Arrays.copyOf(keep, k));
        }
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
            window.useMapping(map); // the first page faults alone (MADV_RANDOM), a read does not
            int status = SegmentHeaders.checkSegmentHeader(map, crc, size, rules.fingerprint());
            if (status == DiskFormat.BAD_HEADER_CRC && SegmentHeaders.resealInterruptedNonce(map, crc)) {
                status = SegmentHeaders.checkSegmentHeader(map, crc, size, rules.fingerprint()); // a compaction's first write, cut short
            }
            if (status != DiskFormat.VALID || map.get(DiskFormat.INT, DiskFormat.SEG_ID) != id) {
                arena.close();
                ch.close();
                dropSegmentFile(file, status == DiskFormat.VALID ? "id differs from the file name"
                        : DiskFormat.reason(status));
                return;
            }
            Segment seg = new Segment(id, file, arena, ch, map, map.get(DiskFormat.LONG, DiskFormat.SEG_NONCE));
            long headerBytes = map.get(DiskFormat.LONG, DiskFormat.SEG_BYTES);
            long hwm = SegmentHeaders.readHighWaterMark(map, crc);
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
            long markLast = hwmTrusted && limit == hwm ? SegmentHeaders.lastRecordOffset(map) : -1;
            this.seg = seg;
            readAhead = null;
            if (RecoveryWindow.ENABLED && RecoveryReadAhead.ENABLED
                    && firstRecordBytes(limit) <= RecoveryReadAhead.DENSE_RECORD_BYTES) {
                window.useFile(ch, file, limit); // short records: the whole file up to the mark, sequentially
            } else { // long records (their header pages only), or reading ahead switched off: the mapping
                if (adviceBytes == 0) {
                    adviceBytes = RecoveryReadAhead.adviceBytesFor(directory.path());
                }
                readAhead = new RecoveryReadAhead(map, limit, adviceBytes);
            }
            long end = scanRecords(seg, limit, hwmTrusted, markLast, deleted);
            if (seg.liveRecords == 0) {
                segments.delete(seg);
                return;
            }
            seg.highWaterMark = end;
            seg.writtenBytes = end;
            SegmentHeaders.writeHighWaterMark(map, crc, end, seg.lastRecordOffset);
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

    /**
     * Indexes the valid records of a recovered segment, sets its last record offset, and returns
     * the end of the last valid record.
     *
     * @param markLast the mark's last record offset where the scan ends at a trusted mark, else -1
     */
    private long scanRecords(Segment seg, long limit, boolean hwmTrusted, long markLast, Set<Deleted> deleted) {
        long pos = DiskFormat.SEGMENT_HEADER_BYTES;
        long end = pos;
        long lastRecord = 0;
        boolean inFault = false;
        boolean staleBelowMark = false;
        while (pos + DiskFormat.RECORD_HEADER_BYTES <= limit) {
            int status = check(pos);
            if (status == DiskFormat.STALE_NONCE && hwmTrusted) {
                int verdict = unmoved.judge(seg, window, pos, limit, deleted);
                if (verdict != UnmovedRecords.NOT_UNMOVED) { // a record an interrupted compaction had not moved
                    if (verdict == UnmovedRecords.TAKEN) {
                        indexRecord(seg, pos, unmoved.length, unmoved.hashHi, unmoved.hashLo, deleted);
                        end = pos + unmoved.length;
                        lastRecord = pos;
                    } else if (verdict == UnmovedRecords.TORN) { // a torn copy: its intact original may lie inside it
                        fault(seg.file, pos, "a record an interrupted compaction left fails its checksum");
                        pos += DiskFormat.RECORD_ALIGN_BYTES;
                        continue;
                    }
                    inFault = false;
                    pos += unmoved.length;
                    continue;
                }
                if (!staleBelowMark) { // stale below a trusted mark, of no compaction this tier can undo
                    staleBelowMark = true;
                    fault(seg.file, pos, "records of another nonce below the trusted high-water mark are dropped");
                }
            }
            if (status == DiskFormat.VALID || status == DiskFormat.STALE_NONCE) {
                judgeChain(seg, pos, status == DiskFormat.STALE_NONCE, limit, markLast);
                if (accepted >= 0) {
                    inFault = false;
                    for (int i = 0; ; i++) { // the chain's members up to the accepted one, from its arrays
                        long m = chainOffsets[i];
                        long len = chainLengths[i];
                        if (i != 0 || status == DiskFormat.VALID) { // a stale first member is skipped
                            indexRecord(seg, m, len, chainHashHi[i], chainHashLo[i], deleted);
                            end = m + len;
                            lastRecord = m;
                        }
                        if (m == accepted) {
                            pos = m + len;
                            break;
                        }
                    }
                }
                if (rejected >= 0) { // at pos: the member after the accepted ones
                    if (accepted < 0 && status == DiskFormat.STALE_NONCE) {
                        inFault = false;
                        pos = rejectedInner; // a stale header is skipped up to the valid header inside it
                    } else { // a damaged length: it runs past the mark or over the valid header at rejectedInner
                        if (!inFault) {
                            inFault = true;
                            fault(seg.file, pos, "recovery dropped bytes: " + (rejectedInner >= 0
                                    ? "length runs over the record header at " + rejectedInner
                                    : "runs past the high-water mark " + limit));
                        }
                        invalidate(pos);
                        pos = rejectedInner >= 0 ? rejectedInner : limit; // no valid header lies in between
                    }
                }
            } else {
                boolean empty = !hwmTrusted
                        && window.bytes().get(DiskFormat.LONG, window.at(pos, DiskFormat.RECORD_HEADER_BYTES)) == 0L;
                if (!inFault && !empty) {
                    inFault = true;
                    fault(seg.file, pos, "recovery dropped bytes: " + DiskFormat.reason(status));
                }
                if (status != DiskFormat.NO_MAGIC) {
                    invalidate(pos);
                }
                pos += DiskFormat.RECORD_ALIGN_BYTES;
            }
        }
        seg.lastRecordOffset = lastRecord;
        return end;
    }

    /** Indexes a record recovery accepted, unless the journal deleted it or its key is indexed already. */
    private void indexRecord(Segment seg, long pos, long len, long hi, long lo, Set<Deleted> deleted) {
        if ((deleted.isEmpty() || !deleted.contains(new Deleted(seg.nonce, pos, hi, lo)))
                && index.find(hi, lo) == RecordIndex.NONE) {
            index.insert(hi, lo, seg.slot, pos, len);
            seg.liveBytes += len;
            seg.liveRecords++;
            counters.liveBytes += len;
            counters.recoveredBlocks++;
        }
    }

    /**
     * Judges the chain that starts at {@code start} (a valid or stale header): the records linked
     * to it, each found at the end of the one before and naming it as its predecessor, up to the
     * first record whose successor does not. Sets {@link #accepted} to the last member accepted
     * (-1: none) and {@link #rejected} to the member after it (-1: none), with
     * {@link #rejectedInner}, the first valid header inside the rejected member or -1.
     *
     * <p>The last member is accepted without reading inside it if it ends at the trusted mark and
     * the mark names it; otherwise if no valid header starts inside it and it ends at or below
     * the mark (a stale one may run past). Any earlier member is accepted if the member after it
     * is, since the writer wrote that one just after it; else, walking back along the previous
     * record offsets, if no valid header starts inside it.
     */
    private void judgeChain(Segment seg, long start, boolean startStale, long limit, long markLast) {
        boolean trust = TRUST_CHAIN;
        chainSize = 0;
        long last = start;
        long length = addMember(start);
        while (trust) {
            long next = last + length;
            if (readAhead != null) {
                readAhead.before(next, length);
            }
            if (next + DiskFormat.RECORD_HEADER_BYTES > limit
                    || check(next) != DiskFormat.VALID
                    || previousAt(next) != last) {
                break;
            }
            last = next;
            length = addMember(next);
        }
        accepted = -1;
        rejected = -1;
        rejectedInner = -1;
        long lastEnd = last + length;
        if (trust && lastEnd == limit && last == markLast) {
            accepted = last;
            return;
        }
        long inner = headerInside(seg, last, Math.min(lastEnd, limit));
        if (inner < 0 && (lastEnd <= limit || (last == start && startStale))) {
            accepted = last;
            return;
        }
        rejected = last;
        rejectedInner = inner;
        for (long member = last; member != start; ) {
            long before = previousAt(member);
            inner = headerInside(seg, before, member);
            if (inner < 0) {
                accepted = before;
                return;
            }
            rejected = before;
            rejectedInner = inner;
            member = before;
        }
    }

    /**
     * The first valid header inside the record at {@code pos}, below {@code to}, or -1; counted in
     * {@link DiskStats#recoveryInsideScans()}.
     */
    private long headerInside(Segment seg, long pos, long to) {
        counters.recoveryInsideScans++;
        return firstHeaderWithin(seg, pos + DiskFormat.RECORD_ALIGN_BYTES, to);
    }

    /**
     * The first offset in {@code [from, to)}, stepping 64 bytes, where a header valid for the
     * segment starts (judged against the file's length, not the mark), or -1 if none does.
     */
    private long firstHeaderWithin(Segment seg, long from, long to) {
        for (long q = from; q + DiskFormat.RECORD_HEADER_BYTES <= to; q += DiskFormat.RECORD_ALIGN_BYTES) {
            if (check(q) == DiskFormat.VALID) {
                return q;
            }
        }
        return -1;
    }

    /**
     * Zeroes the magic of a record header that recovery skipped as damaged, so that no later
     * recovery, whatever its mark, judges it valid.
     */
    private void invalidate(long pos) {
        seg.map.set(DiskFormat.INT, pos + DiskFormat.REC_MAGIC, 0);
        window.wrote(pos + DiskFormat.REC_MAGIC, 0);
    }

    /** Verdict on the record header at file offset {@code pos} of the segment being scanned. */
    private int check(long pos) {
        long at = window.at(pos, DiskFormat.RECORD_HEADER_BYTES);
        return rules.check(window.bytes(), pos - at, pos, seg.capacity, crc, seg.nonce);
    }

    /** The previous record offset of the (valid) record header at {@code pos}. */
    private long previousAt(long pos) {
        return RecordHeaders.recordPreviousOffset(window.bytes(), window.at(pos, DiskFormat.RECORD_HEADER_BYTES));
    }

    /**
     * The length of the first record if its header is valid or stale, else 0: the guess for the
     * segment's records that chooses how the walk reads them.
     */
    private long firstRecordBytes(long limit) {
        long first = DiskFormat.SEGMENT_HEADER_BYTES;
        if (first + DiskFormat.RECORD_HEADER_BYTES > limit) {
            return 0;
        }
        int status = check(first);
        return status == DiskFormat.VALID || status == DiskFormat.STALE_NONCE
                ? RecordHeaders.recordBytesAt(window.bytes(), window.at(first, DiskFormat.RECORD_HEADER_BYTES)) : 0;
    }

    /**
     * Appends the record at {@code pos} (its header valid or stale) to the chain's arrays;
     * returns its length.
     */
    private long addMember(long pos) {
        if (chainSize == chainOffsets.length) {
            int n = chainSize * 2;
            chainOffsets = Arrays.copyOf(chainOffsets, n);
            chainLengths = Arrays.copyOf(chainLengths, n);
            chainHashHi = Arrays.copyOf(chainHashHi, n);
            chainHashLo = Arrays.copyOf(chainHashLo, n);
        }
        long at = window.at(pos, DiskFormat.RECORD_HEADER_BYTES);
        MemorySegment b = window.bytes();
        long length = RecordHeaders.recordBytesAt(b, at);
        chainOffsets[chainSize] = pos;
        chainLengths[chainSize] = length;
        chainHashHi[chainSize] = RecordHeaders.recordHashHi(b, at);
        chainHashLo[chainSize] = RecordHeaders.recordHashLo(b, at);
        chainSize++;
        return length;
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
