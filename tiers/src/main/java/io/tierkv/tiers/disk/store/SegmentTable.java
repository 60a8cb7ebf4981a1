package io.tierkv.tiers.disk.store;

import io.tierkv.core.error.DiskFullException;
import io.tierkv.natives.libc.Libc;
import io.tierkv.tiers.disk.DiskOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * The disk tier's segment files: the table of open segments (a record's index entry names its
 * segment by slot in this table), the active segment that receives appends, and the bytes the
 * tier's files take on disk ({@link #usedBytes}: segments whole, plus metadata and journal, as
 * the budget counts them). Creates a segment by checking usable space, reserving the file whole
 * with {@code posix_fallocate} and mapping it (advised {@code MADV_RANDOM}); deletes one by
 * unmapping and unlinking it; recycles one that eviction emptied (new nonce, empty again).
 *
 * <p>Not thread-safe: used under the disk tier's lock.
 */
final class SegmentTable {

    /**
     * Whether a new segment is refused up front when the file system reports less usable space
     * than a segment; tests switch it off to reach {@code posix_fallocate}'s own refusal.
     */
    static volatile boolean CHECK_USABLE_SPACE = true;

    private static final System.Logger LOG = System.getLogger(DiskTier.class.getName());

    private final DiskOptions options;
    private final Path dir;
    private final long fingerprint;
    private final CRC32C crc;
    private final DiskCounters counters;
    private final SecureRandom random = new SecureRandom();

    private Segment[] slots = new Segment[16];
    private int count;
    private Segment active;
    private int nextSegmentId;
    private boolean lowSpaceWarned;
    /** Bytes of every file the tier keeps on disk now. */
    long usedBytes;

    /**
     * Creates an empty table.
     *
     * @param options     the options (directory, segment size, space warnings)
     * @param fingerprint the layout fingerprint written into segment headers
     * @param crc         the tier's checksum object
     * @param counters    the tier's counters
     */
    SegmentTable(DiskOptions options, long fingerprint, CRC32C crc, DiskCounters counters) {
        this.options = options;
        this.dir = options.directory();
        this.fingerprint = fingerprint;
        this.crc = crc;
        this.counters = counters;
    }

    /**
     * The segment in a slot.
     *
     * @param slot a slot, as stored in the record index
     * @return the segment, or null for an empty slot
     */
    Segment at(int slot) {
        return slots[slot];
    }

    /**
     * Slots in the table now (empty ones included); iterate {@code at(0..slotCount()-1)}.
     *
     * @return the table's length
     */
    int slotCount() {
        return slots.length;
    }

    /** {@return heap bytes of the table's array of segment references (4 B each, compressed)} */
    long heapBytes() {
        return RecordIndex.arrayBytes(slots.length, Integer.BYTES);
    }

    /**
     * Segments open now.
     *
     * @return the count
     */
    int count() {
        return count;
    }

    /**
     * The segment appends go to, or null when none is chosen.
     *
     * @return the active segment
     */
    Segment active() {
        return active;
    }

    /**
     * Chooses the segment appends go to.
     *
     * @param seg a segment in the table, or null
     */
    void setActive(Segment seg) {
        active = seg;
    }

    /**
     * Makes sure new segments get ids above one recovered.
     *
     * @param id a segment id found on disk
     */
    void sawSegmentId(int id) {
        nextSegmentId = Math.max(nextSegmentId, id + 1);
    }

    /**
     * Reserves, maps and adds a new, empty segment of {@link DiskOptions#segmentBytes()}.
     *
     * @return the segment
     * @throws DiskFullException if usable space is below one segment or {@code posix_fallocate}
     *     refuses (no file is left behind)
     * @throws UncheckedIOException if the file cannot be created or mapped
     */
    Segment create() {
        long bytes = options.segmentBytes();
        long usable = DiskFiles.usableBytes(dir);
        if (CHECK_USABLE_SPACE && usable >= 0 && usable < bytes) {
            throw new DiskFullException(dir.toString(), bytes, usable);
        }
        if (usable >= 0 && options.lowSpaceWarnBytes() > 0) {
            boolean low = usable - bytes < options.lowSpaceWarnBytes();
            if (low && !lowSpaceWarned) {
                LOG.log(System.Logger.Level.WARNING, "disk tier {0}: {1} B usable on its file system after this "
                        + "segment, below lowSpaceWarnBytes {2}", dir, usable - bytes, options.lowSpaceWarnBytes());
            }
            lowSpaceWarned = low;
        }
        int id = nextSegmentId++;
        Path file = dir.resolve(DiskFormat.segmentFileName(id));
        try {
            DiskFiles.createOwnerOnly(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create segment " + file, e);
        }
        FileChannel ch = null;
        Arena arena = null;
        boolean interrupted = Thread.interrupted(); // NIO closes a channel an interrupted thread uses: not this one
        try {
            DiskFiles.reserve(file, bytes, dir);
            ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            arena = Arena.ofShared();
            MemorySegment map = ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena);
            adviseRandom(map);
            long nonce = newNonce();
            SegmentHeaders.writeSegmentHeader(map, crc, fingerprint, nonce, id, bytes);
            Segment seg = new Segment(id, file, arena, ch, map, nonce);
            seg.highWaterMark = DiskFormat.SEGMENT_HEADER_BYTES;
            seg.writtenBytes = DiskFormat.SEGMENT_HEADER_BYTES;
            add(seg);
            usedBytes += bytes;
            counters.segmentsCreated++;
            return seg;
        } catch (IOException | RuntimeException e) {
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
            DiskFiles.deleteQuietly(file);
            if (e instanceof RuntimeException r) {
                throw r;
            }
            throw new UncheckedIOException("cannot map segment " + file + " (" + bytes + " B; check vm.max_map_count "
                    + "and the address-space limit)", (IOException) e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt(); // the caller's interrupt, kept
            }
        }
    }

    /**
     * Writes back, unmaps and drops from the page cache the pages that hold
     * {@code [offset, offset + length)} of a segment (see {@link DiskMaintenance#dropCachedPages(long,
     * long)}).
     *
     * @param seg    the segment
     * @param offset first byte
     * @param length bytes
     * @throws UncheckedIOException if msync, madvise or posix_fadvise failed
     */
    static void dropCachedPages(Segment seg, long offset, long length) {
        long page = Libc.pageSizeBytes();
        long start = offset & -page;
        long end = Math.min(seg.capacity, (offset + length + page - 1) & -page);
        MemorySegment range = seg.map.asSlice(start, end - start);
        range.force();
        int rc = Libc.madvise(range, Libc.MADV_DONTNEED);
        if (rc == 0) {
            rc = Libc.posixFadvise(seg.file, start, end - start, Libc.POSIX_FADV_DONTNEED);
        }
        if (rc != 0) {
            throw new UncheckedIOException(new IOException(seg.file + " [" + start + ", " + end
                    + "): dropping cached pages failed, errno " + rc));
        }
    }

    /**
     * Switches off read-ahead on a segment mapping: recovery asks for the pages its walk will read
     * ({@link RecoveryReadAhead}) and a load for exactly its record's pages (both
     * {@code MADV_WILLNEED}), so the kernel's default window (128 KiB per fault) would only read
     * bytes nobody asked for. Advice is a hint:
     * a refusal changes speed, not correctness, and is ignored.
     *
     * @param map a segment mapping
     */
    static void adviseRandom(MemorySegment map) {
        Libc.madvise(map, Libc.MADV_RANDOM);
    }

    /**
     * A random nonce, non-zero and unlike every open segment's.
     *
     * @return the nonce
     */
    /**
     * The nonce a compaction in place gives a segment: {@link #successor} of its nonce, so that a
     * recovery after a crash part way through can tell the records it had not moved yet (they
     * carry the nonce whose successor the header holds) from older ones; a fresh random nonce in
     * the (2^-64-rare) case the successor is 0 or another live segment's, which only costs those
     * records if that compaction is interrupted.
     *
     * @param previous the segment's nonce now
     * @return its next nonce, not 0 and not any live segment's
     */
    long compactionNonce(long previous) {
        long n = successor(previous);
        return n == 0 || liveNonces().contains(n) ? newNonce() : n;
    }

    /**
     * The successor of a nonce: SplitMix64's output function applied to {@code nonce + 0x9E3779B97F4A7C15}
     * (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014), a
     * bijection of 64-bit words, so a nonce has exactly one predecessor.
     *
     * @param nonce a nonce
     * @return the next one
     */
    static long successor(long nonce) {
        long z = nonce + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** How many compactions in a row a crash may interrupt and leave records of their old nonces behind. */
    static final int ANCESTORS = 8;

    /**
     * Whether {@code older} is one of the {@value #ANCESTORS} nonces before {@code nonce} along
     * {@link #successor}: the nonce of records that compactions interrupted by crashes left
     * unmoved in a segment whose nonce is now {@code nonce}.
     *
     * @param older  a record's nonce
     * @param nonce  its segment's nonce
     * @return whether {@code nonce} is {@code older}'s successor, or its successor's, ..., at most
     *     {@value #ANCESTORS} steps on
     */
    static boolean isAncestor(long older, long nonce) {
        return isAncestorOfAny(older, n -> n == nonce);
    }

    /**
     * Whether {@code older} is one of the {@value #ANCESTORS} nonces before some nonce {@code
     * nonces} accepts, as {@link #isAncestor}.
     *
     * @param older  a record's nonce
     * @param nonces which nonces count (for example the live segments')
     * @return whether one of {@code older}'s first {@value #ANCESTORS} successors is accepted
     */
    static boolean isAncestorOfAny(long older, java.util.function.LongPredicate nonces) {
        long n = older;
        for (int i = 0; i < ANCESTORS; i++) {
            n = successor(n);
            if (nonces.test(n)) {
                return true;
            }
        }
        return false;
    }

    long newNonce() {
        long n;
        do {
            n = random.nextLong();
        } while (n == 0 || liveNonces().contains(n));
        return n;
    }

    /**
     * The nonces of the open segments (journal entries naming another are obsolete).
     *
     * @return a new set
     */
    Set<Long> liveNonces() {
        Set<Long> nonces = new HashSet<>();
        for (Segment s : slots) {
            if (s != null) {
                nonces.add(s.nonce);
            }
        }
        return nonces;
    }

    /**
     * Puts a segment into the first free slot, growing the table if needed.
     *
     * @param seg an open segment not in the table
     */
    void add(Segment seg) {
        int slot = -1;
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] == null) {
                slot = i;
                break;
            }
        }
        if (slot < 0) {
            slot = slots.length;
            slots = Arrays.copyOf(slots, slots.length * 2);
        }
        slots[slot] = seg;
        seg.slot = slot;
        count++;
    }

    /**
     * Takes a segment out of the table, unmaps it and deletes its file (a failed delete is
     * logged); its bytes leave {@link #usedBytes}.
     *
     * @param seg a segment in the table
     */
    void delete(Segment seg) {
        slots[seg.slot] = null;
        count--;
        if (active == seg) {
            active = null;
        }
        seg.close();
        try {
            Files.deleteIfExists(seg.file);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot delete emptied segment " + seg.file, e);
        }
        usedBytes -= seg.capacity;
        counters.segmentsDeleted++;
    }

    /**
     * Reuses a segment that eviction emptied, in place of deleting it and reserving a new file of
     * the same size: its pages stay in the page cache and its mapping stays. A new nonce goes into
     * its header first, so after a crash its old records are stale, as after a compaction.
     *
     * @param seg an empty segment in the table
     */
    void recycle(Segment seg) {
        long nonce = newNonce();
        SegmentHeaders.writeSegmentNonce(seg.map, crc, nonce);
        seg.nonce = nonce;
        seg.highWaterMark = DiskFormat.SEGMENT_HEADER_BYTES;
        seg.lastRecordOffset = 0;
        SegmentHeaders.writeHighWaterMark(seg.map, crc, seg.highWaterMark, 0);
        seg.sealed = false;
        seg.evictedBytes = 0;
    }

    /**
     * The segment files now.
     *
     * @return their paths, in slot order
     */
    List<Path> files() {
        List<Path> out = new ArrayList<>();
        for (Segment s : slots) {
            if (s != null) {
                out.add(s.file);
            }
        }
        return out;
    }

    /**
     * Closes every segment and empties the table.
     *
     * @param keep true: force the mapped pages to the device and keep the files (persistent
     *             close); false: delete the files
     */
    void closeAll(boolean keep) {
        for (int i = 0; i < slots.length; i++) {
            Segment seg = slots[i];
            if (seg == null) {
                continue;
            }
            if (keep) {
                seg.map.force();
            }
            seg.close();
            if (!keep) {
                DiskFiles.deleteQuietly(seg.file);
            }
            slots[i] = null;
        }
        count = 0;
        active = null;
    }

    /** Unmaps and closes every segment, keeping the files (after a failed open). */
    void abandon() {
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] != null) {
                slots[i].close();
                slots[i] = null;
            }
        }
    }
}
