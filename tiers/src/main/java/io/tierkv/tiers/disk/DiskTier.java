package io.tierkv.tiers.disk;

import io.tierkv.core.KvLayout;
import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.error.DiskFullException;
import io.tierkv.natives.libc.Libc;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32C;

/**
 * The disk tier: sealed KV blocks kept in memory-mapped segment files under a byte budget, keyed
 * by their 128-bit block hash, optionally persistent across restarts.
 *
 * <h2>Terms</h2>
 * <ul>
 *   <li><b>record</b>: one stored block: a 64-byte header, the block's token ids, the payload (raw
 *       or LZ4), padding to 64 bytes. Byte layout and validators: {@link DiskFormat}.</li>
 *   <li><b>segment</b>: a file of {@link DiskOptions#segmentBytes()} bytes, reserved whole with
 *       {@code posix_fallocate} before it is mapped whole ({@code FileChannel.map} into a shared
 *       {@link Arena} per segment). Records are appended at its high-water mark.</li>
 *   <li><b>live / dead</b>: a record the index points to is live; an evicted, removed or
 *       quarantined record stays in its segment as dead bytes until the segment is emptied
 *       (deleted) or compacted.</li>
 *   <li><b>nonce</b>: a random number in the segment header, copied into each record it holds;
 *       compaction in place gives the segment a new nonce, so records of its earlier life are
 *       recognisably stale after a crash.</li>
 * </ul>
 *
 * <h2>Bytes</h2>
 * <pre>
 * directory/ tierkv-disk.lock   file lock: one manager per directory (in this JVM and others)
 *            tierkv-disk.meta   layout fingerprint and fields (64 B)
 *            deletions.journal  persistent mode only: deleted records (chronicle-bytes MappedBytes)
 *            seg-0000000007.tkv
 *              +--------+------------------+------------------+-----+------------- - - -+
 *              | header | record           | record (dead)    | ... | reserved, zero     |
 *              | 64 B   | hdr|tokens|payload| hdr|tokens|payload|     |                    |
 *              +--------+------------------+------------------+-----+------------- - - -+
 *              0        64                                    high-water mark     segmentBytes
 * </pre>
 * The budget counts every byte of every file the tier keeps ({@link #usedBytes()} equals the sum
 * of their sizes), so a segment counts whole from its creation, dead bytes included.
 *
 * <h2>Paths</h2>
 * Spill ({@link #put}): encode (LZ4 and optional shuffle, raw when it does not save 1/32), find
 * room, checksum and write the payload in one pass a chunk at a time (into
 * the mapping where the segment's pages were written before, else positional {@code FileChannel}
 * writes), then the header and token ids, advance the mark (a checksummed field of the segment
 * header), index the record as most recently used. Load ({@link #get}):
 * advise {@code MADV_WILLNEED} on the record (mappings carry {@code MADV_RANDOM}, so exactly the
 * record's pages are read), validate the header against the index, then copy a raw payload out of
 * the mapping into the caller's block a chunk at a time and checksum each chunk in the
 * destination while it is in cache; a mismatch zeroes the destination before the miss returns. An
 * LZ4 payload is verified in the mapping, then decompressed into the caller's memory. The package
 * overview gives the measurements.
 *
 * <h2>Eviction and compaction</h2>
 * When a record does not fit the active segment: another segment with room becomes active; else
 * a new segment is created if the budget allows; else the segment with the lowest kept ratio (live
 * bytes plus bytes evicted from it since its last compaction, over its record space) is compacted
 * in place (live records slid to its front, new nonce) if that ratio is below
 * {@link DiskOptions#compactBelowLiveRatio()} and it frees enough; else the least recently used
 * record is evicted (reported to the {@link EvictionListener}) and the steps repeat. A segment that
 * this eviction empties is recycled in place (new nonce, empty, active): its file, pages and
 * mapping are reused rather than deleted and reserved anew. Counting evicted bytes as kept means
 * holes made by eviction, which sit next to the records next in line for it, are never compacted
 * away (that would copy each record once more before evicting it); holes made by removal or
 * quarantine are. Any other segment whose last live record goes is deleted at once.
 *
 * <h2>Persistence and recovery</h2>
 * Persistent mode appends every deletion to the journal before it takes effect in memory. Opening
 * rebuilds the index from record headers (header checksum, layout fingerprint, nonce, bounds),
 * skips journal-deleted records and duplicates, resynchronises at the next 64-byte boundary after
 * damaged bytes (each damaged run counted in {@link DiskStats#recoveryFaults()}), drops a segment
 * whose header is damaged, treats bytes past a truncated file's end as torn, and then rewrites the
 * journal. Payload checksums are verified on first read, not at open. Recovered records are
 * indexed oldest segment first as least recently used, and {@link #forEachKey} reports them.
 *
 * <h2>Concurrency</h2>
 * Thread-safe: every public method runs under one {@link ReentrantLock}, so spills, loads,
 * evictions and compaction are serialised (a load copies under the lock; at 1 MiB blocks that is
 * a fraction of a millisecond). Eviction listener calls happen after the lock is released, on the
 * thread whose call caused them, in eviction order; a listener may call back into the tier.
 *
 * <h2>Failures</h2>
 * A full disk is a {@link DiskFullException} from {@code put}, raised while reserving a new
 * segment (usable space checked first, then {@code posix_fallocate}); nothing is stored then and
 * mapped pages are never written without reserved blocks behind them, so no SIGBUS. A record that
 * fails verification on read is a counted miss ({@link DiskStats#corruptMisses()}), is dropped
 * from the index and journaled as deleted (quarantined), is reported as evicted, raises a JFR
 * {@code io.tierkv.DiskFault} event and a warning log line, and not one of its bytes reaches the
 * caller. Use after {@link #close()} is an {@link IllegalStateException}.
 *
 * <p>Assumptions: the directory belongs to this tier (owner-only permissions, locked); nothing
 * else writes or truncates its files while it is open (a file truncated under a live mapping
 * would fault the JVM, as for any mapped file). Little-endian platforms only.
 */
public final class DiskTier implements AutoCloseable {

    /** Receives the keys the tier dropped on its own (budget evictions, {@link #evict}, quarantine). */
    @FunctionalInterface
    public interface EvictionListener {
        /**
         * A record left the disk tier without the caller asking for that key.
         *
         * @param hashHi block hash, high 64 bits
         * @param hashLo block hash, low 64 bits
         */
        void evicted(long hashHi, long hashLo);
    }

    /** Visits keys. */
    @FunctionalInterface
    public interface KeyVisitor {
        /**
         * Called once per key.
         *
         * @param hashHi block hash, high 64 bits
         * @param hashLo block hash, low 64 bits
         */
        void visit(long hashHi, long hashLo);
    }

    /** How {@link #put} writes a record's bytes into its segment. */
    enum SpillPath {
        /** Copy into the mapping ({@code MemorySegment.copy}) below the segment's written mark. */
        MAPPED,
        /** Positional {@code FileChannel.write} always; the mapping sees the bytes. */
        CHANNEL
    }

    /**
     * Write path used by {@link #put}, chosen by measurement: {@link SpillPath#MAPPED} where the
     * record lies below the segment's written mark (pages the file already has: a recycled
     * segment), positional channel writes elsewhere. In {@code SpillLoadBenchmark} (steady state,
     * every segment recycled) the mapped copy spilled 256 KiB and 1 MiB blocks in 43 and 200 us
     * against 60 and 285 us through the channel; copying into a fresh mapping faults every page.
     */
    static volatile SpillPath SPILL_PATH = SpillPath.MAPPED;

    /**
     * Bytes checksummed and then copied per step of a spill or load: small enough to stay in a
     * core's L2 cache between the two passes.
     */
    static final long COPY_CHUNK_BYTES = 128 << 10;

    /**
     * Whether {@link #get} advises {@code MADV_WILLNEED} on a record spanning more than a page
     * before reading it, so its pages arrive in one request. Segment mappings carry
     * {@code MADV_RANDOM} (no read-ahead beyond what is asked), which without this advice turns a
     * cold load into one synchronous 4 KiB read per page: measured 0.04 GB/s cold without it,
     * 0.39 to 0.57 GB/s with it (0.6 to 0.9 of the best cold baseline, device-bound), and 0.5 to
     * 0.6 of a bare mapped copy when the page cache is warm (the rest is the CRC32C pass).
     */
    static volatile boolean LOAD_WILLNEED = true;

    /**
     * Whether a new segment is refused up front when the file system reports less usable space
     * than a segment; tests switch it off to reach {@code posix_fallocate}'s own refusal.
     */
    static volatile boolean CHECK_USABLE_SPACE = true;

    private static final System.Logger LOG = System.getLogger(DiskTier.class.getName());
    private static final long PAGE_BYTES = Libc.pageSizeBytes();

    private final ReentrantLock lock = new ReentrantLock();
    private final DiskOptions options;
    private final KvLayout layout;
    private final Path dir;
    private final long fingerprint;
    private final int maxTokens;
    private final int maxRaw;
    private final long journalCapacity;
    private final Arena scratchArena = Arena.ofShared();
    private final MemorySegment headerScratch;
    private final BlockCodec codec;
    private final CRC32C crc = new CRC32C();
    private final RecordIndex index;
    private final AdmissionFilter admission;
    private final SecureRandom random = new SecureRandom();
    private final ThreadLocal<Pending> pending = ThreadLocal.withInitial(Pending::new);

    private FileChannel lockChannel;
    private FileLock fileLock;
    private DeletionJournal journal;
    private Segment[] segments = new Segment[16];
    private int segmentCount;
    private Segment active;
    private int nextSegmentId;
    private long usedBytes;
    private boolean lowSpaceWarned;
    private volatile EvictionListener listener;
    private boolean closed;

    // counters (under lock)
    private long puts;
    private long putsExisting;
    private long admissionRejects;
    private long gets;
    private long hits;
    private long misses;
    private long corruptMisses;
    private long evictions;
    private long removals;
    private long quarantined;
    private long bytesWritten;
    private long rawBytesWritten;
    private long recordBytesWritten;
    private long bytesRead;
    private long rawBytesRead;
    private long recoveredBlocks;
    private long recoveryFaults;
    private long droppedSegments;
    private long compactions;
    private long compactedBytes;
    private long segmentsCreated;
    private long segmentsDeleted;
    private long diskFullFailures;
    private long liveBytes;

    private DiskTier(DiskOptions options, KvLayout layout, long journalCapacity) {
        this.options = options;
        this.layout = layout;
        this.dir = options.directory();
        this.fingerprint = layout.fingerprint();
        this.maxTokens = layout.blockSizeTokens();
        this.maxRaw = layout.bytesPerBlock();
        this.journalCapacity = journalCapacity;
        this.headerScratch = scratchArena.allocate(DiskFormat.RECORD_HEADER_BYTES + 4L * maxTokens, 64);
        this.codec = new BlockCodec(options.compression(), options.shuffle(), layout.dtype().sizeBytes(), maxRaw,
                scratchArena);
        long expectedRecords = Math.max(16, options.budgetBytes() / DiskFormat.maxRecordBytes(layout));
        this.index = new RecordIndex((int) Math.min(1 << 16, expectedRecords));
        this.admission = options.admitOnSecondSight() ? new AdmissionFilter(4 * expectedRecords) : null;
    }

    /**
     * Opens a disk tier on its directory: creates the directory (owner-only) if absent, locks it,
     * and either recovers what a persistent tier left there or starts empty (deleting this tier's
     * own files left by an earlier non-persistent run or a crash; foreign files are left alone).
     *
     * @param options the options
     * @param layout  the block layout; blocks up to {@link KvLayout#bytesPerBlock()} bytes and up to
     *                {@link KvLayout#blockSizeTokens()} token ids are accepted
     * @return the open tier
     * @throws IllegalArgumentException if a segment cannot hold the largest record, the budget
     *     cannot hold one segment plus the journal and metadata, or the directory is a symbolic
     *     link or not a directory (messages name the field, value and bound)
     * @throws IllegalStateException if another manager (in this JVM or another) holds the
     *     directory, or a persistent directory was written for another layout and
     *     {@link DiskOptions#wipeOnLayoutMismatch()} is false
     * @throws DiskFullException if the journal's space cannot be reserved
     * @throws UnsupportedOperationException on a big-endian platform
     * @throws UncheckedIOException on other I/O failures
     */
    public static DiskTier open(DiskOptions options, KvLayout layout) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(layout, "layout");
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new UnsupportedOperationException("the disk tier's files are little-endian; this platform is "
                    + ByteOrder.nativeOrder());
        }
        DiskFormat.checkSegmentFits(options.segmentBytes(), layout);
        long journalCapacity = options.persistent() ? journalCapacityFor(options, layout) : 0;
        long overhead = DiskFormat.META_BYTES + (options.persistent() ? DiskFormat.journalBytes(journalCapacity) : 0);
        if (options.budgetBytes() < options.segmentBytes() + overhead) {
            throw new IllegalArgumentException("budgetBytes: " + options.budgetBytes() + " (expected >= "
                    + (options.segmentBytes() + overhead) + ": one segment of " + options.segmentBytes()
                    + " B plus " + overhead + " B of metadata" + (options.persistent() ? " and journal" : "") + ")");
        }
        DiskFiles.ensureDirectory(options.directory());
        DiskTier tier = new DiskTier(options, layout, journalCapacity);
        try {
            tier.lockDirectory();
            tier.start();
            tier.pending.get().size = 0; // recovery's budget evictions concern no listener yet
            return tier;
        } catch (RuntimeException | Error e) {
            tier.abandon();
            throw e;
        }
    }

    /**
     * Journal capacity: twice the full records the budget holds, within [1024, 2^20] entries.
     *
     * @param options the options
     * @param layout  the block layout
     * @return entries
     */
    static long journalCapacityFor(DiskOptions options, KvLayout layout) {
        long records = options.budgetBytes() / DiskFormat.maxRecordBytes(layout);
        return Math.max(1024, Math.min(1L << 20, 2 * records));
    }

    // ------------------------------------------------------------------------------------ open

    private void lockDirectory() {
        Path lockFile = dir.resolve(DiskFormat.LOCK_FILE);
        if (Files.isSymbolicLink(lockFile)) {
            throw new IllegalArgumentException("lock file " + lockFile + " is a symbolic link (refused)");
        }
        try {
            lockChannel = FileChannel.open(lockFile, Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS), PosixFilePermissions.asFileAttribute(
                            PosixFilePermissions.fromString("rw-------")));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open lock file " + lockFile, e);
        }
        try {
            fileLock = lockChannel.tryLock();
        } catch (OverlappingFileLockException e) {
            fileLock = null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot lock " + lockFile, e);
        }
        if (fileLock == null) {
            throw new IllegalStateException("disk tier directory " + dir + " is held by another manager (lock "
                    + lockFile + " is taken); use a directory of its own for each manager");
        }
    }

    private void start() {
        List<Path> own = listOwnFiles();
        Path metaFile = dir.resolve(DiskFormat.META_FILE);
        boolean wipe = !options.persistent();
        if (!wipe) {
            String mismatch = layoutMismatch(metaFile, own);
            if (mismatch != null) {
                if (!options.wipeOnLayoutMismatch()) {
                    throw new IllegalStateException("disk tier directory " + dir + " was written for another layout ("
                            + mismatch + "), this tier's layout is " + layout
                            + "; use another directory or set wipeOnLayoutMismatch");
                }
                LOG.log(System.Logger.Level.WARNING, "wiping disk tier directory {0}: written for another layout ({1})",
                        dir, mismatch);
                wipe = true;
            }
        }
        if (wipe) {
            for (Path p : own) {
                if (!p.getFileName().toString().equals(DiskFormat.LOCK_FILE)) {
                    DiskFiles.deleteQuietly(p);
                }
            }
        }
        writeMeta(metaFile);
        usedBytes = DiskFormat.META_BYTES;
        if (options.persistent()) {
            recover();
        }
    }

    /** Own files in the directory: regular files (not links) with the tier's names. */
    private List<Path> listOwnFiles() {
        List<Path> own = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                String name = p.getFileName().toString();
                if (!DiskFormat.isOwnFileName(name)) {
                    continue;
                }
                if (!Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    LOG.log(System.Logger.Level.WARNING, "leaving {0} alone: named like a disk tier file but not a "
                            + "regular file (a symbolic link?)", p);
                    continue;
                }
                own.add(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list disk tier directory " + dir, e);
        }
        own.sort(null);
        return own;
    }

    /** Describes the foreign layout a persistent directory was written for, or null if it matches. */
    private String layoutMismatch(Path metaFile, List<Path> own) {
        if (Files.isRegularFile(metaFile, LinkOption.NOFOLLOW_LINKS)) {
            try (Arena arena = Arena.ofConfined()) {
                byte[] bytes = Files.readAllBytes(metaFile);
                MemorySegment meta = arena.allocate(Math.max(1, bytes.length));
                MemorySegment.copy(MemorySegment.ofArray(bytes), 0, meta, 0, bytes.length);
                meta = meta.asSlice(0, bytes.length);
                if (DiskFormat.checkMeta(meta, crc) == DiskFormat.VALID) {
                    long fp = DiskFormat.metaFingerprint(meta);
                    return fp == fingerprint ? null : DiskFormat.metaLayoutText(meta) + ", fingerprint "
                            + Long.toHexString(fp);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + metaFile, e);
            }
        }
        // no readable metadata: judge by the segment headers that verify
        for (Path p : own) {
            if (DiskFormat.segmentIdOf(p.getFileName().toString()) < 0) {
                continue;
            }
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
                ByteBuffer head = ByteBuffer.allocate(DiskFormat.SEGMENT_HEADER_BYTES);
                if (ch.read(head, 0) < DiskFormat.SEGMENT_HEADER_BYTES) {
                    continue;
                }
                MemorySegment h = MemorySegment.ofArray(head.array());
                if (DiskFormat.checkSegmentHeader(h, crc, DiskFormat.SEGMENT_HEADER_BYTES, fingerprint)
                        == DiskFormat.BAD_FINGERPRINT) {
                    return "segment " + p.getFileName() + " has fingerprint "
                            + Long.toHexString(h.get(DiskFormat.LONG, DiskFormat.SEG_FINGERPRINT));
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + p, e);
            }
        }
        return null;
    }

    private void writeMeta(Path metaFile) {
        Path temp = dir.resolve(DiskFormat.META_FILE + DiskFormat.TEMP_SUFFIX);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment meta = arena.allocate(DiskFormat.META_BYTES);
            DiskFormat.writeMeta(meta, crc, layout);
            DiskFiles.deleteQuietly(temp);
            DiskFiles.createOwnerOnly(temp);
            Files.write(temp, meta.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            Files.move(temp, metaFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            DiskFiles.deleteQuietly(temp);
            throw new UncheckedIOException("cannot write " + metaFile, e);
        }
    }

    /** A journal entry, as a set member during recovery. */
    private record Deleted(long nonce, long offset, long hashHi, long hashLo) {}

    private void recover() {
        long[] entries = DeletionJournal.readEntries(dir.resolve(DiskFormat.JOURNAL_FILE), fingerprint);
        Set<Deleted> deleted = new HashSet<>();
        for (int i = 0; i + 3 < entries.length; i += 4) {
            deleted.add(new Deleted(entries[i], entries[i + 1], entries[i + 2], entries[i + 3]));
        }
        List<Path> files = new ArrayList<>();
        for (Path p : listOwnFiles()) {
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
            nextSegmentId = Math.max(nextSegmentId, id + 1);
            recoverSegment(file, id, deleted);
        }
        Set<Long> nonces = liveNonces();
        long[] keep = new long[entries.length];
        int k = 0;
        for (int i = 0; i + 3 < entries.length; i += 4) {
            if (nonces.contains(entries[i])) {
                System.arraycopy(entries, i, keep, k, 4);
                k += 4;
            }
        }
        long capacity = Math.max(journalCapacity, k / 4);
        journal = DeletionJournal.create(dir, fingerprint, capacity, Arrays.copyOf(keep, k));
        usedBytes += journal.fileBytes();
        while (usedBytes > options.budgetBytes() && index.size() > 0) {
            removeSlot(index.leastRecent(), Cause.EVICT);
        }
        if (journal.count() * 4 > journal.capacity() * 3) {
            ensureJournalRoom();
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
            adviseRandom(map);
            int status = DiskFormat.checkSegmentHeader(map, crc, size, fingerprint);
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
            addSegment(seg);
            usedBytes += size;
            long end = scanRecords(seg, limit, hwmTrusted, deleted);
            if (seg.liveRecords == 0) {
                deleteSegment(seg);
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
            int status = DiskFormat.checkRecordHeader(map, pos, limit, crc, fingerprint, seg.nonce, maxTokens, maxRaw);
            if (status == DiskFormat.VALID) {
                inFault = false;
                long len = DiskFormat.recordBytesAt(map, pos);
                long hi = DiskFormat.recordHashHi(map, pos);
                long lo = DiskFormat.recordHashLo(map, pos);
                if (!deleted.contains(new Deleted(seg.nonce, pos, hi, lo)) && index.find(hi, lo) == RecordIndex.NONE) {
                    index.insert(hi, lo, seg.slot, pos, len);
                    seg.liveBytes += len;
                    seg.liveRecords++;
                    liveBytes += len;
                    recoveredBlocks++;
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
        recoveryFaults++;
        DiskFaultEvent.emit(file.toString(), offset, reason);
        LOG.log(System.Logger.Level.WARNING, "disk tier fault in {0} at {1}: {2}", file, offset, reason);
    }

    private void dropSegmentFile(Path file, String reason) {
        droppedSegments++;
        segmentsDeleted++;
        DiskFaultEvent.emit(file.toString(), -1, "segment dropped: " + reason);
        LOG.log(System.Logger.Level.WARNING, "disk tier dropped segment {0}: {1}", file, reason);
        DiskFiles.deleteQuietly(file);
    }

    /** Releases everything after a failed open; the caller rethrows. */
    private void abandon() {
        for (int i = 0; i < segments.length; i++) {
            if (segments[i] != null) {
                segments[i].close();
                segments[i] = null;
            }
        }
        if (journal != null) {
            journal.close();
        }
        releaseLock(false);
        scratchArena.close();
        closed = true;
    }

    // ------------------------------------------------------------------------------ public API

    /**
     * Sets the listener told about keys the tier drops on its own; {@code null} for none. Calls
     * happen after the tier's lock is released, on the thread that caused them.
     *
     * @param l the listener
     */
    public void setEvictionListener(EvictionListener l) {
        this.listener = l;
    }

    /**
     * Stores a sealed block under its hash.
     *
     * @param hashHi   block hash, high 64 bits
     * @param hashLo   block hash, low 64 bits
     * @param tokenIds the block's token ids: native-order {@code int}s, at most
     *                 {@link KvLayout#blockSizeTokens()} of them (normally exactly that many)
     * @param block    the block's bytes, at most {@link KvLayout#bytesPerBlock()} (normally exactly)
     * @return true if the block is on disk now (written, or already there: putting an existing key
     *     is a no-op); false if the admission filter declined a first sighting
     * @throws DiskFullException when no segment could be reserved (the file system is full or
     *     below one segment of usable space); nothing was stored, though records may have been
     *     evicted while making room
     * @throws IllegalArgumentException if {@code tokenIds} is not a whole number of ints or holds
     *     more than {@code blockSizeTokens}, or {@code block} is longer than {@code bytesPerBlock}
     * @throws IllegalStateException if the tier is closed
     * @throws UncheckedIOException if writing failed (nothing was stored)
     */
    public boolean put(long hashHi, long hashLo, MemorySegment tokenIds, MemorySegment block) {
        Objects.requireNonNull(tokenIds, "tokenIds");
        Objects.requireNonNull(block, "block");
        long tokenBytes = tokenIds.byteSize();
        if (tokenBytes % 4 != 0 || tokenBytes > 4L * maxTokens) {
            throw new IllegalArgumentException("tokenIds: " + tokenBytes + " bytes (expected a multiple of 4, at most "
                    + 4L * maxTokens + " for " + maxTokens + " tokens)");
        }
        if (block.byteSize() > maxRaw) {
            throw new IllegalArgumentException("block: " + block.byteSize() + " bytes (expected <= bytesPerBlock "
                    + maxRaw + ")");
        }
        boolean stored;
        lock.lock();
        try {
            ensureOpen();
            stored = putLocked(hashHi, hashLo, tokenIds, (int) (tokenBytes / 4), block);
        } finally {
            lock.unlock();
        }
        deliverEvictions();
        return stored;
    }

    private boolean putLocked(long hi, long lo, MemorySegment tokenIds, int tokenCount, MemorySegment block) {
        if (index.find(hi, lo) != RecordIndex.NONE) {
            putsExisting++;
            return true;
        }
        if (admission != null && !admission.admit(hi, lo)) {
            admissionRejects++;
            return false;
        }
        int rawLength = (int) block.byteSize();
        codec.encode(block);
        MemorySegment stored = codec.stored;
        int storedLength = (int) stored.byteSize();
        long tokenBytes = 4L * tokenCount;
        MemorySegment.copy(tokenIds, 0, headerScratch, DiskFormat.RECORD_HEADER_BYTES, tokenBytes);
        long recordLength = DiskFormat.recordBytes(tokenCount, storedLength);
        Segment seg;
        try {
            seg = allocate(recordLength, hi, lo);
        } catch (DiskFullException e) {
            diskFullFailures++;
            throw e;
        }
        long off = seg.highWaterMark;
        long headLength = DiskFormat.RECORD_HEADER_BYTES + tokenBytes;
        crc.reset();
        DiskFormat.update(crc, headerScratch, DiskFormat.RECORD_HEADER_BYTES, tokenBytes);
        writePayload(seg, stored, off + headLength);
        int payloadCrc = (int) crc.getValue();
        DiskFormat.writeRecordHeader(headerScratch, 0, crc, codec.codec, codec.encodedShuffleWidth, fingerprint, hi,
                lo, seg.nonce, tokenCount, rawLength, storedLength, payloadCrc);
        if (off + headLength <= seg.writtenBytes && SPILL_PATH == SpillPath.MAPPED) {
            MemorySegment.copy(headerScratch, 0, seg.map, off, headLength);
        } else {
            writeFully(seg, headerScratch.asSlice(0, headLength).asByteBuffer(), off);
        }
        seg.highWaterMark = off + recordLength;
        seg.writtenBytes = Math.max(seg.writtenBytes, seg.highWaterMark);
        DiskFormat.writeHighWaterMark(seg.map, crc, seg.highWaterMark);
        index.insert(hi, lo, seg.slot, off, recordLength);
        seg.liveBytes += recordLength;
        seg.liveRecords++;
        liveBytes += recordLength;
        puts++;
        bytesWritten += storedLength;
        rawBytesWritten += rawLength;
        recordBytesWritten += recordLength;
        return true;
    }

    /**
     * Writes a payload at {@code position} of a segment and adds it to {@link #crc}, one chunk at
     * a time: each chunk is checksummed and then written while it is still in the CPU's cache, so
     * the source is read from memory once. Bytes below the segment's written mark (pages this
     * file already has) are copied into the mapping when {@link #SPILL_PATH} says so; bytes above
     * it go through positional channel writes, which allocate page-cache pages without a fault
     * per page.
     */
    private void writePayload(Segment seg, MemorySegment src, long position) {
        long length = src.byteSize();
        boolean mapped = SPILL_PATH == SpillPath.MAPPED && position + length <= seg.writtenBytes;
        for (long done = 0; done < length; done += COPY_CHUNK_BYTES) {
            long n = Math.min(COPY_CHUNK_BYTES, length - done);
            ByteBuffer chunk = src.asSlice(done, n).asByteBuffer();
            crc.update(chunk);
            if (mapped) {
                MemorySegment.copy(src, done, seg.map, position + done, n);
            } else {
                writeFully(seg, chunk.rewind(), position + done);
            }
        }
    }

    private static void writeFully(Segment seg, ByteBuffer buf, long position) {
        try {
            long pos = position;
            while (buf.hasRemaining()) {
                pos += seg.channel.write(buf, pos);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("write to " + seg.file + " at " + position + " failed", e);
        }
    }

    /**
     * Loads a block. Same as {@link #load} but answers only whether it hit.
     *
     * @param hashHi      block hash, high 64 bits
     * @param hashLo      block hash, low 64 bits
     * @param tokenIdsOut receives the token ids (native-order ints), or {@code null} to skip them
     * @param blockOut    receives the block's bytes
     * @return true on a verified hit; false on a miss (including a quarantined corrupt record)
     * @throws IllegalArgumentException if an output is smaller than the stored record needs
     * @throws IllegalStateException if the tier is closed
     */
    public boolean get(long hashHi, long hashLo, MemorySegment tokenIdsOut, MemorySegment blockOut) {
        return load(hashHi, hashLo, tokenIdsOut, blockOut) >= 0;
    }

    /**
     * Loads a block: verifies the record's header and the CRC32C of its token ids and payload, and
     * delivers the block into {@code blockOut} and the token ids into {@code tokenIdsOut}. A
     * record that fails verification is a counted miss, is quarantined (dropped from the index,
     * journaled, reported to the eviction listener), its token ids are not written, and no byte of
     * it is left in {@code blockOut} (a raw payload is checked as it is copied, so on a mismatch
     * the first {@code rawLength} bytes of {@code blockOut} are zeroed before the call returns).
     * A hit makes the record most recently used.
     *
     * @param hashHi      block hash, high 64 bits
     * @param hashLo      block hash, low 64 bits
     * @param tokenIdsOut receives the stored token ids (native-order ints), or {@code null}
     * @param blockOut    receives the block's raw bytes from offset 0; on a miss its contents are
     *                    unspecified (unchanged, or zeroed over the stored length)
     * @return the block's length in bytes on a hit, -1 on a miss
     * @throws IllegalArgumentException if {@code blockOut} (or a non-null {@code tokenIdsOut}) is
     *     smaller than the record's block (or token ids)
     * @throws IllegalStateException if the tier is closed
     * @throws UncheckedIOException if reading the segment file failed
     */
    public int load(long hashHi, long hashLo, MemorySegment tokenIdsOut, MemorySegment blockOut) {
        Objects.requireNonNull(blockOut, "blockOut");
        int result;
        lock.lock();
        try {
            ensureOpen();
            result = loadLocked(hashHi, hashLo, tokenIdsOut, blockOut);
        } finally {
            lock.unlock();
        }
        deliverEvictions();
        return result;
    }

    private int loadLocked(long hi, long lo, MemorySegment tokenIdsOut, MemorySegment blockOut) {
        int slot = index.find(hi, lo);
        if (slot == RecordIndex.NONE) {
            gets++;
            misses++;
            return -1;
        }
        Segment seg = segments[index.segment[slot]];
        long off = index.offset[slot];
        long len = index.length[slot];
        MemorySegment map = seg.map;
        if (LOAD_WILLNEED && len > PAGE_BYTES) {
            // before the header is read: its page comes with the same request as the rest
            Libc.madvise(map.asSlice(off, len), Libc.MADV_WILLNEED);
        }
        int status = DiskFormat.checkRecordHeader(map, off, off + len, crc, fingerprint, seg.nonce, maxTokens, maxRaw);
        if (status != DiskFormat.VALID) {
            gets++;
            return corrupt(slot, seg, off, DiskFormat.reason(status), -1, -1);
        }
        if (DiskFormat.recordHashHi(map, off) != hi || DiskFormat.recordHashLo(map, off) != lo
                || DiskFormat.recordBytesAt(map, off) != len) {
            gets++;
            return corrupt(slot, seg, off, "header names another block or length", -1, -1);
        }
        int tokens = DiskFormat.recordTokenCount(map, off);
        int raw = DiskFormat.recordRawLength(map, off);
        int storedLength = DiskFormat.recordStoredLength(map, off);
        if (blockOut.byteSize() < raw) {
            throw new IllegalArgumentException("blockOut: " + blockOut.byteSize() + " bytes (expected >= " + raw
                    + ", the stored block's length)");
        }
        if (tokenIdsOut != null && tokenIdsOut.byteSize() < 4L * tokens) {
            throw new IllegalArgumentException("tokenIdsOut: " + tokenIdsOut.byteSize() + " bytes (expected >= "
                    + 4L * tokens + " for " + tokens + " tokens)");
        }
        gets++;
        long tokenOff = off + DiskFormat.RECORD_HEADER_BYTES;
        long payloadOff = tokenOff + 4L * tokens;
        int expected = DiskFormat.recordPayloadCrc(map, off);
        crc.reset();
        DiskFormat.update(crc, map, tokenOff, 4L * tokens);
        int codecByte = DiskFormat.recordCodec(map, off);
        if (codecByte == DiskFormat.CODEC_RAW) {
            readRawPayload(map, payloadOff, blockOut, raw);
        } else {
            DiskFormat.update(crc, map, payloadOff, storedLength);
        }
        int actual = (int) crc.getValue();
        if (actual != expected) {
            if (codecByte == DiskFormat.CODEC_RAW) {
                blockOut.asSlice(0, raw).fill((byte) 0); // no byte of a record that failed verification stays
            }
            return corrupt(slot, seg, off, "payload checksum mismatch", expected & 0xFFFFFFFFL, actual & 0xFFFFFFFFL);
        }
        if (codecByte != DiskFormat.CODEC_RAW && !codec.decode(map.asSlice(payloadOff, storedLength), codecByte,
                DiskFormat.recordShuffleWidth(map, off), raw, blockOut)) {
            return corrupt(slot, seg, off, "payload does not decode to " + raw + " bytes", -1, -1);
        }
        if (tokenIdsOut != null && tokens > 0) {
            MemorySegment.copy(map, tokenOff, tokenIdsOut, 0, 4L * tokens);
        }
        hits++;
        bytesRead += storedLength;
        rawBytesRead += raw;
        index.touch(slot);
        return raw;
    }

    /**
     * Copies a raw payload into {@code out} and adds it to {@link #crc}, one chunk at a time: each
     * chunk is checksummed in the destination right after it was copied, while it is still in the
     * CPU's cache, so the record is read from the page cache once. The caller verifies the sum and
     * wipes {@code out} on a mismatch.
     */
    private void readRawPayload(MemorySegment map, long position, MemorySegment out, int length) {
        for (long done = 0; done < length; done += COPY_CHUNK_BYTES) {
            long n = Math.min(COPY_CHUNK_BYTES, length - done);
            MemorySegment chunk = out.asSlice(done, n);
            MemorySegment.copy(map, position + done, chunk, 0, n);
            crc.update(chunk.asByteBuffer());
        }
    }

    /** Counts (the caller counted the get), reports and quarantines a record that failed verification. */
    private int corrupt(int slot, Segment seg, long off, String reason, long expected, long actual) {
        misses++;
        corruptMisses++;
        CorruptBlockException e = new CorruptBlockException(seg.file.getFileName() + "@" + off, reason, expected,
                actual);
        DiskFaultEvent.emit(seg.file.toString(), off, reason);
        LOG.log(System.Logger.Level.WARNING, e.getMessage() + " (record quarantined, served as a miss)");
        removeSlot(slot, Cause.QUARANTINE);
        return -1;
    }

    /**
     * Whether a key is on disk, without reading it.
     *
     * @param hashHi block hash, high 64 bits
     * @param hashLo block hash, low 64 bits
     * @return whether a record for the key is indexed (it may still fail verification on load)
     * @throws IllegalStateException if the tier is closed
     */
    public boolean contains(long hashHi, long hashLo) {
        lock.lock();
        try {
            ensureOpen();
            return index.find(hashHi, hashLo) != RecordIndex.NONE;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes a key; the listener is not told (the caller asked).
     *
     * @param hashHi block hash, high 64 bits
     * @param hashLo block hash, low 64 bits
     * @return true if a record was removed
     * @throws IllegalStateException if the tier is closed
     */
    public boolean remove(long hashHi, long hashLo) {
        boolean removed = false;
        lock.lock();
        try {
            ensureOpen();
            int slot = index.find(hashHi, hashLo);
            if (slot != RecordIndex.NONE) {
                removeSlot(slot, Cause.REMOVE);
                removed = true;
            }
        } finally {
            lock.unlock();
        }
        deliverEvictions(); // records quarantined by a compaction that made journal room
        return removed;
    }

    /**
     * Evicts up to {@code count} least recently used records, telling the listener about each.
     *
     * @param count records to evict, {@code >= 0}
     * @return records evicted: {@code min(count, blockCount())}
     * @throws IllegalArgumentException if {@code count < 0}
     * @throws IllegalStateException if the tier is closed
     */
    public int evict(int count) {
        if (count < 0) {
            throw new IllegalArgumentException("count: " + count + " (expected >= 0)");
        }
        int n = 0;
        lock.lock();
        try {
            ensureOpen();
            while (n < count && index.size() > 0) {
                removeSlot(index.leastRecent(), Cause.EVICT);
                n++;
            }
        } finally {
            lock.unlock();
        }
        deliverEvictions();
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
        lock.lock();
        try {
            ensureOpen();
            keys = new long[2 * index.size()];
            int i = 0;
            for (int slot = index.leastRecent(); slot != RecordIndex.NONE; slot = index.newerThan(slot)) {
                keys[i++] = index.hashHi[slot];
                keys[i++] = index.hashLo[slot];
            }
        } finally {
            lock.unlock();
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
        lock.lock();
        try {
            ensureOpen();
            for (Segment s : segments) {
                if (s != null && s.liveRatio() < options.compactBelowLiveRatio() && deadBytes(s) > 0) {
                    compactInPlace(s);
                    n++;
                }
            }
        } finally {
            lock.unlock();
        }
        deliverEvictions(); // records quarantined because their header failed verification
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
        lock.lock();
        try {
            ensureOpen();
            int slot = index.find(hashHi, hashLo);
            return slot == RecordIndex.NONE ? -1 : index.length[slot];
        } finally {
            lock.unlock();
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
        lock.lock();
        try {
            ensureOpen();
            int slot = index.find(hashHi, hashLo);
            if (slot == RecordIndex.NONE) {
                return -1;
            }
            return DiskFormat.recordStoredLength(segments[index.segment[slot]].map, index.offset[slot]);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Bytes on disk now, counted as the budget counts them.
     *
     * @return bytes of every file the tier keeps on disk now (segments whole, journal, metadata)
     * @throws IllegalStateException if the tier is closed
     */
    public long usedBytes() {
        lock.lock();
        try {
            ensureOpen();
            return usedBytes;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The budget this tier keeps within.
     *
     * @return bytes
     */
    public long budgetBytes() {
        return options.budgetBytes();
    }

    /**
     * Blocks on disk now.
     *
     * @return records indexed now
     * @throws IllegalStateException if the tier is closed
     */
    public int blockCount() {
        lock.lock();
        try {
            ensureOpen();
            return index.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The options this tier was opened with.
     *
     * @return the options
     */
    public DiskOptions options() {
        return options;
    }

    /**
     * The block layout this tier stores.
     *
     * @return the layout
     */
    public KvLayout layout() {
        return layout;
    }

    /**
     * The counters, taken under the lock.
     *
     * @return a consistent snapshot (also after close)
     */
    public DiskStats stats() {
        lock.lock();
        try {
            return new DiskStats(puts, putsExisting, admissionRejects, gets, hits, misses, corruptMisses, evictions,
                    removals, quarantined, bytesWritten, rawBytesWritten, recordBytesWritten, bytesRead, rawBytesRead,
                    DiskStats.ratio(rawBytesWritten, bytesWritten), recoveredBlocks, recoveryFaults, droppedSegments,
                    compactions, compactedBytes, segmentsCreated, segmentsDeleted, diskFullFailures,
                    closed ? 0 : usedBytes, options.budgetBytes(), liveBytes, closed ? 0 : index.size(), segmentCount);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Checks the tier's structure and throws on the first inconsistency: the index and LRU list
     * agree; per segment, live counts equal a recount over the index and no two records overlap;
     * no empty segment is kept (other than the active one); {@link #usedBytes()} equals the sum of
     * the sizes of the tier's files in the directory and is within the budget. For tests and
     * debugging; it reads the directory.
     *
     * @throws IllegalStateException describing the inconsistency, or if the tier is closed
     */
    public void checkInvariants() {
        lock.lock();
        try {
            ensureOpen();
            String problem = index.check();
            if (problem != null) {
                throw new IllegalStateException("index: " + problem);
            }
            long[] bytes = new long[segments.length];
            int[] records = new int[segments.length];
            List<long[]> extents = new ArrayList<>();
            long live = 0;
            for (int slot = index.leastRecent(); slot != RecordIndex.NONE; slot = index.newerThan(slot)) {
                int s = index.segment[slot];
                if (s < 0 || s >= segments.length || segments[s] == null) {
                    throw new IllegalStateException("record slot " + slot + " points at missing segment " + s);
                }
                bytes[s] += index.length[slot];
                records[s]++;
                live += index.length[slot];
                extents.add(new long[] {s, index.offset[slot], index.length[slot]});
            }
            if (live != liveBytes) {
                throw new IllegalStateException("liveBytes " + liveBytes + " but records sum to " + live);
            }
            extents.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
            for (int i = 0; i < extents.size(); i++) {
                long[] e = extents.get(i);
                Segment seg = segments[(int) e[0]];
                if (e[1] < DiskFormat.SEGMENT_HEADER_BYTES || e[1] + e[2] > seg.highWaterMark) {
                    throw new IllegalStateException("record at " + e[1] + " (+" + e[2] + ") outside " + seg);
                }
                if (i > 0 && extents.get(i - 1)[0] == e[0] && extents.get(i - 1)[1] + extents.get(i - 1)[2] > e[1]) {
                    throw new IllegalStateException("records overlap at " + e[1] + " in " + seg);
                }
            }
            long expectedUsed = DiskFormat.META_BYTES + (journal == null ? 0 : journal.fileBytes());
            int count = 0;
            for (int s = 0; s < segments.length; s++) {
                Segment seg = segments[s];
                if (seg == null) {
                    continue;
                }
                count++;
                expectedUsed += seg.capacity;
                if (seg.liveBytes != bytes[s] || seg.liveRecords != records[s]) {
                    throw new IllegalStateException(seg + " counts " + seg.liveRecords + " records / " + seg.liveBytes
                            + " B but the index holds " + records[s] + " / " + bytes[s]);
                }
                if (seg.highWaterMark > seg.capacity || seg.highWaterMark < DiskFormat.SEGMENT_HEADER_BYTES) {
                    throw new IllegalStateException(seg + " high-water mark out of range");
                }
                if (seg.liveRecords == 0 && seg != active) {
                    throw new IllegalStateException(seg + " is empty but kept");
                }
            }
            if (count != segmentCount) {
                throw new IllegalStateException("segmentCount " + segmentCount + " but " + count + " in the table");
            }
            if (expectedUsed != usedBytes) {
                throw new IllegalStateException("usedBytes " + usedBytes + " but files account for " + expectedUsed);
            }
            long onDisk = 0;
            for (Path p : listOwnFiles()) {
                try {
                    onDisk += Files.size(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            if (onDisk != usedBytes) {
                throw new IllegalStateException("usedBytes " + usedBytes + " but the directory's tier files hold "
                        + onDisk + " B");
            }
            if (usedBytes > options.budgetBytes()) {
                throw new IllegalStateException("usedBytes " + usedBytes + " over budget " + options.budgetBytes());
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Closes the tier; idempotent. Persistent: forces mapped segment pages and the journal to the
     * device and keeps every file. Otherwise: deletes the tier's files. Releases the directory
     * lock either way; afterwards every method but {@link #stats()}, {@link #budgetBytes()},
     * {@link #options()} and this one throws {@link IllegalStateException}.
     */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            boolean keep = options.persistent();
            for (int i = 0; i < segments.length; i++) {
                Segment seg = segments[i];
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
                segments[i] = null;
            }
            segmentCount = 0;
            active = null;
            if (journal != null) {
                if (keep) {
                    journal.sync();
                    journal.close();
                } else {
                    journal.delete();
                }
            }
            if (!keep) {
                DiskFiles.deleteQuietly(dir.resolve(DiskFormat.META_FILE));
            }
            releaseLock(!keep);
            scratchArena.close();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "DiskTier[" + dir + ", " + (closed ? "closed" : index.size() + " blocks, " + usedBytes + "/"
                + options.budgetBytes() + " B") + "]";
    }

    // ------------------------------------------------------------------------------- internals

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("disk tier " + dir + " is closed");
        }
    }

    private void releaseLock(boolean deleteFile) {
        try {
            if (fileLock != null && fileLock.isValid()) {
                if (deleteFile) {
                    DiskFiles.deleteQuietly(dir.resolve(DiskFormat.LOCK_FILE));
                }
                fileLock.release();
            }
            if (lockChannel != null) {
                lockChannel.close();
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "releasing the lock of " + dir + " failed", e);
        }
    }

    /**
     * Why a record is dropped: {@code EVICT} by {@link #evict} or recovery, {@code ROOM_EVICT} by
     * {@link #allocate} (which recycles a segment that emptied), {@code REMOVE} by the caller,
     * {@code QUARANTINE} on a failed load, {@code COMPACTION_QUARANTINE} during compaction.
     */
    private enum Cause { EVICT, ROOM_EVICT, REMOVE, QUARANTINE, COMPACTION_QUARANTINE }

    /**
     * Drops a live record: journals it (persistent), updates counts, deletes its segment if that
     * emptied it, and queues a listener call for evictions and quarantines.
     */
    private void removeSlot(int slot, Cause cause) {
        long hi = index.hashHi[slot];
        long lo = index.hashLo[slot];
        if (journal != null && cause != Cause.COMPACTION_QUARANTINE) {
            ensureJournalRoom();
            if (!index.isLive(slot) || index.hashHi[slot] != hi || index.hashLo[slot] != lo) {
                return; // the compaction that made room quarantined this very record
            }
            Segment seg = segments[index.segment[slot]];
            journal.append(seg.nonce, index.offset[slot], hi, lo);
        }
        Segment seg = segments[index.segment[slot]];
        long len = index.length[slot];
        seg.liveBytes -= len;
        seg.liveRecords--;
        liveBytes -= len;
        index.remove(slot);
        switch (cause) {
            case EVICT, ROOM_EVICT -> {
                evictions++;
                seg.evictedBytes += len;
            }
            case REMOVE -> removals++;
            default -> quarantined++;
        }
        if (cause != Cause.REMOVE) {
            pending.get().add(hi, lo);
        }
        if (seg.liveRecords == 0 && seg != active && cause != Cause.COMPACTION_QUARANTINE
                && cause != Cause.ROOM_EVICT) {
            deleteSegment(seg);
        }
    }

    /** Makes room for one journal entry: drop obsolete entries, and if that is not enough, compact. */
    private void ensureJournalRoom() {
        if (journal.count() < journal.capacity()) {
            return;
        }
        journal.compact(liveNonces()::contains);
        if (journal.count() * 4 > journal.capacity() * 3) {
            // the dead records still named by the journal sit in live segments: compacting those
            // segments gives them new nonces, which makes every entry about them obsolete
            for (Segment s : segments) {
                if (s != null && deadBytes(s) > 0) {
                    compactInPlace(s);
                }
            }
            journal.compact(liveNonces()::contains);
        }
    }

    private Set<Long> liveNonces() {
        Set<Long> nonces = new HashSet<>();
        for (Segment s : segments) {
            if (s != null) {
                nonces.add(s.nonce);
            }
        }
        return nonces;
    }

    private static long deadBytes(Segment s) {
        return s.highWaterMark - DiskFormat.SEGMENT_HEADER_BYTES - s.liveBytes;
    }

    /**
     * Finds a segment with {@code recordLength} bytes free at its high-water mark, creating,
     * compacting or evicting as the class comment describes.
     */
    private Segment allocate(long recordLength, long hi, long lo) {
        while (true) {
            if (active != null) {
                if (active.freeTailBytes() >= recordLength) {
                    return active;
                }
                Segment full = active;
                full.sealed = true;
                active = null;
                if (full.liveRecords == 0) {
                    deleteSegment(full);
                }
            }
            Segment roomy = null;
            for (Segment s : segments) {
                if (s != null && !s.sealed && s.freeTailBytes() >= recordLength
                        && (roomy == null || s.freeTailBytes() > roomy.freeTailBytes())) {
                    roomy = s;
                }
            }
            if (roomy != null) {
                active = roomy;
                continue;
            }
            if (usedBytes + options.segmentBytes() <= options.budgetBytes()) {
                active = createSegment();
                continue;
            }
            Segment best = null;
            for (Segment s : segments) {
                if (s != null && s.capacity - DiskFormat.SEGMENT_HEADER_BYTES - s.liveBytes >= recordLength
                        && (best == null || s.keptRatio() < best.keptRatio())) {
                    best = s;
                }
            }
            if (best != null && best.keptRatio() < options.compactBelowLiveRatio()) {
                if (compactInPlace(best)) {
                    active = best;
                }
                continue;
            }
            if (index.size() == 0) {
                throw new IllegalStateException("disk tier cannot make room for a " + recordLength + " B record: "
                        + "no records left to evict, " + usedBytes + " B used of " + options.budgetBytes()
                        + " (block " + Long.toHexString(hi) + Long.toHexString(lo) + ")");
            }
            int victim = index.leastRecent();
            Segment from = segments[index.segment[victim]];
            removeSlot(victim, Cause.ROOM_EVICT);
            if (from.liveRecords == 0 && segments[from.slot] == from) {
                recycle(from);
                active = from;
            }
        }
    }

    /**
     * Reuses a segment that eviction emptied as the next one to fill, in place of deleting it and
     * reserving a new file of the same size: its pages stay in the page cache and its mapping
     * stays. A new nonce goes into its header first, so after a crash its old records are stale,
     * as after a compaction.
     */
    private void recycle(Segment seg) {
        long nonce = newNonce();
        DiskFormat.writeSegmentNonce(seg.map, crc, nonce);
        seg.nonce = nonce;
        seg.highWaterMark = DiskFormat.SEGMENT_HEADER_BYTES;
        DiskFormat.writeHighWaterMark(seg.map, crc, seg.highWaterMark);
        seg.sealed = false;
        seg.evictedBytes = 0;
    }

    private Segment createSegment() {
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
        try {
            DiskFiles.reserve(file, bytes, dir);
            ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            arena = Arena.ofShared();
            MemorySegment map = ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena);
            adviseRandom(map);
            long nonce = newNonce();
            DiskFormat.writeSegmentHeader(map, crc, fingerprint, nonce, id, bytes);
            Segment seg = new Segment(id, file, arena, ch, map, nonce);
            seg.highWaterMark = DiskFormat.SEGMENT_HEADER_BYTES;
            seg.writtenBytes = DiskFormat.SEGMENT_HEADER_BYTES;
            addSegment(seg);
            usedBytes += bytes;
            segmentsCreated++;
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
        }
    }

    /**
     * Switches off read-ahead on a segment mapping: recovery touches one header page per record
     * and a load asks for exactly its record's pages ({@code MADV_WILLNEED}), so the kernel's
     * default window (128 KiB per fault) would only read bytes nobody asked for. Advice is a hint:
     * a refusal changes speed, not correctness, and is ignored.
     */
    private static void adviseRandom(MemorySegment map) {
        Libc.madvise(map, Libc.MADV_RANDOM);
    }

    private long newNonce() {
        long n;
        do {
            n = random.nextLong();
        } while (n == 0 || liveNonces().contains(n));
        return n;
    }

    private void addSegment(Segment seg) {
        int slot = -1;
        for (int i = 0; i < segments.length; i++) {
            if (segments[i] == null) {
                slot = i;
                break;
            }
        }
        if (slot < 0) {
            slot = segments.length;
            segments = Arrays.copyOf(segments, segments.length * 2);
        }
        segments[slot] = seg;
        seg.slot = slot;
        segmentCount++;
    }

    private void deleteSegment(Segment seg) {
        segments[seg.slot] = null;
        segmentCount--;
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
        segmentsDeleted++;
    }

    /**
     * Slides a segment's live records to its front under a new nonce. The nonce goes first, so a
     * crash part-way leaves moved records valid and unmoved ones recognisably stale (lost, never
     * wrong). A live record whose header fails verification is quarantined instead of moved.
     *
     * @return false if the segment ended up empty and was deleted
     */
    private boolean compactInPlace(Segment seg) {
        int n = seg.liveRecords;
        long[] order = new long[n];
        int k = 0;
        for (int slot = 0; slot < index.slotLimit() && k < n; slot++) {
            if (index.isLive(slot) && index.segment[slot] == seg.slot) {
                order[k++] = ((long) index.offset[slot] << 32) | slot;
            }
        }
        Arrays.sort(order, 0, k);
        long oldNonce = seg.nonce;
        long newNonce = newNonce();
        MemorySegment map = seg.map;
        DiskFormat.writeSegmentNonce(map, crc, newNonce);
        seg.nonce = newNonce;
        long cursor = DiskFormat.SEGMENT_HEADER_BYTES;
        long moved = 0;
        for (int i = 0; i < k; i++) {
            int slot = (int) order[i];
            long off = order[i] >>> 32;
            long len = index.length[slot];
            int status = DiskFormat.checkRecordHeader(map, off, off + len, crc, fingerprint, oldNonce, maxTokens,
                    maxRaw);
            if (status != DiskFormat.VALID || DiskFormat.recordHashHi(map, off) != index.hashHi[slot]
                    || DiskFormat.recordHashLo(map, off) != index.hashLo[slot]) {
                DiskFaultEvent.emit(seg.file.toString(), off, "compaction found a damaged header");
                LOG.log(System.Logger.Level.WARNING, "disk tier: record at {0}@{1} failed verification during "
                        + "compaction: quarantined", seg.file, off);
                removeSlot(slot, Cause.COMPACTION_QUARANTINE);
                continue;
            }
            if (off != cursor) {
                MemorySegment.copy(map, off, map, cursor, len);
                moved += len;
            }
            DiskFormat.rewriteRecordNonce(map, cursor, crc, newNonce);
            index.offset[slot] = (int) cursor;
            cursor += len;
        }
        seg.highWaterMark = cursor;
        DiskFormat.writeHighWaterMark(map, crc, cursor);
        seg.sealed = false;
        seg.evictedBytes = 0;
        compactions++;
        compactedBytes += moved;
        if (seg.liveRecords == 0 && seg != active) {
            deleteSegment(seg);
            return false;
        }
        return true;
    }

    /** Per-thread list of keys to report to the listener once the lock is released. */
    private static final class Pending {
        long[] keys = new long[32];
        int size;

        void add(long hi, long lo) {
            if (size + 2 > keys.length) {
                keys = Arrays.copyOf(keys, keys.length * 2);
            }
            keys[size++] = hi;
            keys[size++] = lo;
        }
    }

    private void deliverEvictions() {
        Pending p = pending.get();
        if (p.size == 0) {
            return;
        }
        long[] keys = Arrays.copyOf(p.keys, p.size);
        p.size = 0;
        EvictionListener l = listener;
        if (l == null) {
            return;
        }
        for (int i = 0; i < keys.length; i += 2) {
            l.evicted(keys[i], keys[i + 1]);
        }
    }

    /**
     * Where a record lies, for tests that damage files on purpose.
     *
     * @param hashHi    block hash, high 64 bits
     * @param hashLo    block hash, low 64 bits
     * @param file      its segment file
     * @param offset    its offset in the file
     * @param usedBytes header, token ids and payload (padding excluded)
     */
    record RecordLocation(long hashHi, long hashLo, Path file, long offset, long usedBytes) {}

    /**
     * Every indexed record's file, offset and length without padding, least recent first.
     *
     * @return the locations
     */
    List<RecordLocation> recordLocations() {
        lock.lock();
        try {
            ensureOpen();
            List<RecordLocation> out = new ArrayList<>();
            for (int slot = index.leastRecent(); slot != RecordIndex.NONE; slot = index.newerThan(slot)) {
                Segment seg = segments[index.segment[slot]];
                long off = index.offset[slot];
                long used = DiskFormat.RECORD_HEADER_BYTES + 4L * DiskFormat.recordTokenCount(seg.map, off)
                        + DiskFormat.recordStoredLength(seg.map, off);
                out.add(new RecordLocation(index.hashHi[slot], index.hashLo[slot], seg.file, off, used));
            }
            return out;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Paths of the segment files now, for tests.
     *
     * @return the paths
     */
    List<Path> segmentFiles() {
        lock.lock();
        try {
            List<Path> out = new ArrayList<>();
            for (Segment s : segments) {
                if (s != null) {
                    out.add(s.file);
                }
            }
            return out;
        } finally {
            lock.unlock();
        }
    }
}
