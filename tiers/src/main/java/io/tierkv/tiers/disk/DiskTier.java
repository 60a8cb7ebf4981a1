package io.tierkv.tiers.disk;

import io.tierkv.core.KvLayout;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.error.DiskFullException;
import io.tierkv.core.prefix.BlockIdentity;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32C;

/**
 * The disk tier: sealed KV blocks kept in memory-mapped segment files under a byte budget, keyed
 * by their 128-bit block hash, optionally persistent across restarts.
 *
 * <h2>Terms</h2>
 * <ul>
 *   <li><b>record</b>: one stored block: a 64-byte header, the block's identity (context, parent
 *       hash, token ids: {@link BlockIdentity}), the payload (raw or LZ4), padding to 64 bytes.
 *       Byte layout and validators: {@link DiskFormat}. A key (hash) only finds a record: every
 *       read, match and put compares the stored identity with the caller's, and a record of another
 *       identity is a counted collision, never served and never taken for the caller's block.</li>
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
 *              | 64 B   | hdr|ident|payload| hdr|ident|payload|     |                    |
 *              +--------+------------------+------------------+-----+------------- - - -+
 *              0        64                                    high-water mark     segmentBytes
 * </pre>
 * The budget counts every byte of every file the tier keeps ({@link #usedBytes()} equals the sum
 * of their sizes), so a segment counts whole from its creation, dead bytes included.
 *
 * <h2>Paths</h2>
 * Spill ({@link #put}, {@code RecordWriter}): encode (LZ4 and optional shuffle, raw when it does
 * not save 1/32), find room, checksum and write the payload in one pass a chunk at a time (into
 * the mapping where the segment's pages were written before and are all in the page cache
 * ({@code mincore}), else positional {@code FileChannel} writes: a copy into a page that is not
 * cached reads it from the device first), then the header and identity, advance the mark (a
 * checksummed field of the segment header), index the record as most recently used. Load ({@link #get}, {@code RecordReader}): for a record
 * some of whose pages are not in the page cache, advise {@code MADV_WILLNEED} on it (mappings
 * carry {@code MADV_RANDOM}, so exactly the record's pages are read; resident records skip the
 * advice, which costs about 18 us per warm 1 MiB load, against 2-3 us for the check), validate the
 * header against the index, then copy a raw payload out of the mapping into the caller's block a
 * chunk at a time and checksum each chunk in the destination while it is in cache; a mismatch
 * zeroes the destination before the miss returns. An LZ4 payload is verified in the mapping, then
 * decompressed into the caller's memory. The package overview gives the measurements.
 *
 * <h2>Eviction and compaction ({@code SpaceManager}, {@code Compactor})</h2>
 * When a record does not fit the active segment: another segment with room becomes active; else
 * a new segment is created if the budget allows; else the segment with the lowest kept ratio (live
 * bytes plus bytes evicted from it since its last compaction, over its record space) is compacted
 * in place (live records slid to its front, new nonce) if that ratio is below
 * {@link DiskOptions#compactBelowLiveRatio()} and it frees enough; else the least recently used
 * unpinned record is evicted (reported to the {@link EvictionListener}) and the steps repeat. A segment that
 * this eviction empties is recycled in place (new nonce, empty, active): its file, pages and
 * mapping are reused rather than deleted and reserved anew. Counting evicted bytes as kept means
 * holes made by eviction, which sit next to the records next in line for it, are never compacted
 * away (that would copy each record once more before evicting it); holes made by removal or
 * quarantine are. Any other segment whose last live record goes is deleted at once.
 *
 * <p>Pins ({@link RecordPins#pin}, {@link #putPinned}): the manager pins the record of a block that an open
 * sequence references, since the record may be that block's only copy. A pin names one record:
 * its serial, unique over the tier's life, is the handle that {@link RecordPins#unpin} takes back, so a pin
 * never releases another record that came to hold the same key later. A pinned record sits on a
 * list of its own, off the LRU list, so it is never a victim (for room, by budget or by
 * {@link DiskMaintenance#evict}). Removal and quarantine still drop it; its pins become <em>broken pins</em>
 * ({@link RecordPins#pinBroken}, answered without the lock), each released by its holder's {@code unpin}
 * as any other, touching no record. Before evicting anything for room the
 * tier checks that some segment could hold the new record once its unpinned records were gone (or
 * the budget allows a new segment); when none can, the put is refused with
 * {@link CapacityExhaustedException} ({@link DiskStats#pinRefusals()}) and nothing is evicted. A
 * segment whose remaining live records are all pinned is compacted as soon as that frees the room,
 * since eviction could never empty it.
 *
 * <h2>Persistence and recovery ({@code Recovery})</h2>
 * Persistent mode appends every deletion to the journal before it takes effect in memory. Opening
 * rebuilds the index from record headers (header checksum, layout fingerprint, nonce, bounds),
 * following the chain in which each header names the record before it, so an intact segment costs
 * one header read per record and a record's inside is read only where the chain breaks
 * ({@link DiskStats#recoveryInsideScans()}), skips journal-deleted records and duplicates,
 * resynchronises at the next 64-byte boundary after
 * damaged bytes (each damaged run counted in {@link DiskStats#recoveryFaults()}), drops a segment
 * whose header is damaged, treats bytes past a truncated file's end as torn, and then rewrites the
 * journal. Payload checksums are verified on first read, not at open. Recovered records are
 * indexed oldest segment first as least recently used, and {@link DiskMaintenance#forEachKey} reports them.
 *
 * <h2>Concurrency</h2>
 * Thread-safe: every public method runs under one {@link ReentrantLock}, so spills, loads,
 * evictions and compaction are serialised (a load copies and checksums under the lock; at 1 MiB
 * blocks that is a fraction of a millisecond). Copying outside the lock would need a pin per
 * segment that holds off compaction, recycling and deletion while a reader copies, since all
 * three rewrite bytes of live segments in place. Eviction listener calls happen after the lock is
 * released, on the thread whose call caused them, in eviction order; a listener may call back
 * into the tier.
 *
 * <h2>Failures</h2>
 * A full disk is a {@link DiskFullException} from {@code put}, raised while reserving a new
 * segment (usable space checked first, then {@code posix_fallocate}); nothing is stored then and
 * mapped pages are never written without reserved blocks behind them, so no SIGBUS. A record that
 * fails verification on read is a counted miss ({@link DiskStats#corruptMisses()}), is dropped
 * from the index and journaled as deleted (quarantined; its pins become broken pins), is reported
 * as evicted, raises a JFR {@code io.tierkv.DiskFault} event, and not one of its bytes reaches the
 * caller. Damage is logged once per kind (the first at WARNING, the counts of all at close:
 * {@code CorruptionLog}), not once per record. {@link DiskFaultInjection} damages records on
 * purpose for fault-injection runs. Use after {@link #close()} is an {@link IllegalStateException}.
 *
 * <h2>Parts</h2>
 * This class is the facade: argument checks, the lock, open and close. The work is done by
 * {@code TierDirectory} (lock file, own files, layout check, metadata), {@code SegmentTable}
 * (segment files), {@code SpaceManager} and {@code Compactor} (room and removal),
 * {@code RecordWriter} and {@code RecordReader} (spill and load), {@code Recovery},
 * {@code RecordIndex}, {@code BlockCodec}, {@code DiskCounters}, {@code EvictionNotices},
 * {@code CorruptionLog} and {@code InvariantCheck}; {@link DiskFormat} describes every byte.
 *
 * <p>Assumptions: the directory belongs to this tier (owner-only permissions, locked); nothing
 * else writes or truncates its files while it is open (a file truncated under a live mapping
 * would fault the JVM, as for any mapped file). Little-endian platforms only.
 */
public final class DiskTier implements AutoCloseable {

    /** Receives the keys the tier dropped on its own (budget evictions, {@link DiskMaintenance#evict}, quarantine). */
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

    /**
     * Receives the records the tier evicts, verified, just before their bytes go: how blocks
     * leaving the lowest local tier reach the tier below (a remote store).
     */
    @FunctionalInterface
    public interface DepartureSink {
        /**
         * A verified record is about to be evicted. Called with the disk tier's lock held: copy
         * what is kept and return at once (never block, never call the tier). The segments are
         * valid for the call only.
         *
         * @param hashHi   block hash, high 64 bits
         * @param hashLo   block hash, low 64 bits
         * @param identity the record's {@link io.tierkv.core.prefix.BlockIdentity}
         * @param payload  the block's bytes, decoded
         */
        void departing(long hashHi, long hashLo, MemorySegment identity, MemorySegment payload);
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

    final ReentrantLock lock = new ReentrantLock();
    final DiskOptions options;
    private final KvLayout layout;
    private final Path dir;
    private final int maxTokens;
    private final int maxRaw;
    private final RecordRules rules;
    private final Arena scratchArena = Arena.ofShared();
    private final CRC32C crc = new CRC32C();
    private final DiskCounters counters = new DiskCounters();
    final EvictionNotices notices = new EvictionNotices();
    private final CorruptionLog corruptionLog;
    final RecordIndex index;
    private final AdmissionFilter admission;
    final SegmentTable segments;
    final SpaceManager space;
    private final Departures departures;
    private final RecordWriter writer;
    private final RecordReader reader;

    /** The key space asked for at open, then the one the directory records. */
    private KeySpace keySpace;
    private TierDirectory directory;
    private boolean closed;
    private final RecordPins pinning = new RecordPins(this);
    private final DiskMaintenance maintenance = new DiskMaintenance(this);

    private DiskTier(DiskOptions options, KvLayout layout, KeySpace keySpace) {
        this.keySpace = keySpace;
        this.options = options;
        this.layout = layout;
        this.dir = options.directory();
        this.maxTokens = layout.blockSizeTokens();
        this.maxRaw = layout.bytesPerBlock();
        this.rules = RecordRules.of(layout);
        this.corruptionLog = new CorruptionLog(dir);
        long expectedRecords = Math.max(16, options.budgetBytes() / DiskFormat.maxRecordBytes(layout));
        this.index = new RecordIndex((int) Math.min(1 << 16, expectedRecords));
        this.admission = options.admitOnSecondSight() ? new AdmissionFilter(4 * expectedRecords) : null;
        this.segments = new SegmentTable(options, rules.fingerprint(), crc, counters);
        Compactor compactor = new Compactor(index, segments, rules, crc, counters, corruptionLog);
        this.departures = new Departures(rules, index, segments, options, layout.dtype().sizeBytes());
        this.space = new SpaceManager(options, index, segments, compactor, counters, notices, departures);
        BlockCodec codec = new BlockCodec(options.compression(), options.shuffle(), layout.dtype().sizeBytes(), maxRaw,
                scratchArena);
        PageResidency residency = new PageResidency(scratchArena, DiskFormat.maxRecordBytes(layout));
        this.writer = new RecordWriter(rules, codec, index, space, crc, counters, scratchArena, residency);
        this.reader = new RecordReader(rules, codec, index, segments, space, crc, counters, residency,
                corruptionLog);
    }

    /**
     * Checks the rules that tie the options' fields together and to the layout, which
     * {@link DiskOptions} leaves to its user so its {@code withX} methods work in any order: a
     * segment holds a 64-byte header plus the largest record of the layout, and the budget holds
     * one segment plus the metadata (and, when persistent, the journal). Touches no file.
     *
     * @param options the options
     * @param layout  the block layout
     * @throws NullPointerException     if options or layout is null
     * @throws IllegalArgumentException naming the field, its value and the bound; for the budget,
     *                                  the message names both {@code budgetBytes} and
     *                                  {@code segmentBytes}
     */
    public static void check(DiskOptions options, KvLayout layout) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(layout, "layout");
        DiskFormat.checkSegmentFits(options.segmentBytes(), layout);
        long journalCapacity = options.persistent() ? journalCapacityFor(options, layout) : 0;
        long overhead = DiskFormat.META_BYTES + (options.persistent() ? DiskFormat.journalBytes(journalCapacity) : 0);
        if (options.budgetBytes() < options.segmentBytes() + overhead) {
            throw new IllegalArgumentException("budgetBytes: " + options.budgetBytes() + " (expected >= segmentBytes "
                    + options.segmentBytes() + " + " + overhead + " B of metadata"
                    + (options.persistent() ? " and journal" : "") + " = " + (options.segmentBytes() + overhead)
                    + "; lower segmentBytes or raise budgetBytes)");
        }
    }

    /**
     * Bytes {@link #open} reserves on the file system before the first record: the metadata file
     * and, when persistent, the deletion journal (reserved whole with {@code posix_fallocate};
     * sized from the budget, see {@link DiskFormat#journalBytes}). Segments are not among them:
     * each is reserved when a record first needs it, after a check of usable space. Touches no
     * file.
     *
     * @param options the options
     * @param layout  the block layout
     * @return bytes, {@code > 0}
     * @throws NullPointerException if options or layout is null
     */
    public static long reservedAtOpenBytes(DiskOptions options, KvLayout layout) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(layout, "layout");
        return DiskFormat.META_BYTES
                + (options.persistent() ? DiskFormat.journalBytes(journalCapacityFor(options, layout)) : 0);
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
        return open(options, layout, KeySpace.DEFAULT);
    }

    /**
     * Opens a disk tier whose keys are block hashes of {@code keySpace}'s function: as
     * {@link #open(DiskOptions, KvLayout)}, and a persistent directory written under another
     * function or key is refused.
     *
     * @param options  the options
     * @param layout   the block layout
     * @param keySpace the block hash function (and key fingerprint) its keys come from
     * @return the open tier
     * @throws IllegalArgumentException as {@link #open(DiskOptions, KvLayout)}
     * @throws IllegalStateException as {@link #open(DiskOptions, KvLayout)}, and when a persistent
     *     directory records another key space or format version (the message names both)
     * @throws DiskFullException if the journal's space cannot be reserved
     * @throws UnsupportedOperationException on a big-endian platform
     * @throws UncheckedIOException on other I/O failures
     */
    public static DiskTier open(DiskOptions options, KvLayout layout, KeySpace keySpace) {
        Objects.requireNonNull(keySpace, "keySpace");
        check(options, layout);
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new UnsupportedOperationException("the disk tier's files are little-endian; this platform is "
                    + ByteOrder.nativeOrder());
        }
        long journalCapacity = options.persistent() ? journalCapacityFor(options, layout) : 0;
        DiskFiles.ensureDirectory(options.directory());
        DiskTier tier = new DiskTier(options, layout, keySpace);
        try {
            tier.start(journalCapacity);
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

    private void start(long journalCapacity) {
        directory = TierDirectory.lock(dir);
        keySpace = directory.prepare(options, layout, keySpace, crc);
        segments.usedBytes = DiskFormat.META_BYTES;
        if (options.persistent()) {
            new Recovery(directory, options, rules, crc, index, segments, space, counters, corruptionLog)
                    .run(journalCapacity);
        }
        notices.clear(); // recovery's budget evictions concern no listener yet
    }

    /** Releases everything after a failed open; the caller rethrows. */
    private void abandon() {
        segments.abandon();
        if (space.journal() != null) {
            space.journal().close();
        }
        if (directory != null) {
            directory.release(false);
        }
        scratchArena.close();
        closed = true;
    }

    // ------------------------------------------------------------------------------ public API

    /**
     * The block hash function this tier's keys come from, as its directory records it: for a
     * {@linkplain KeySpace#generated generated} key, {@link KeySpace#storedKey()} is the key the
     * manager hashes with.
     *
     * @return the key space
     */
    public KeySpace keySpace() {
        return keySpace;
    }

    /**
     * Sets the listener told about keys the tier drops on its own; {@code null} for none. Calls
     * happen after the tier's lock is released, on the thread that caused them.
     *
     * @param l the listener
     */
    public void setEvictionListener(EvictionListener l) {
        notices.setListener(l);
    }

    /**
     * Sets the sink handed every record the tier evicts (by budget or {@link DiskMaintenance#evict}),
     * verified, before its bytes go; {@code null} for none. Records removed on request, quarantined
     * or dropped by recovery are not handed on.
     *
     * @param sink the sink
     * @throws IllegalStateException if the tier is closed
     */
    public void setDepartureSink(DepartureSink sink) {
        lock.lock();
        try {
            ensureOpen();
            departures.setSink(sink);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stores a sealed block under its hash, with its identity. A record already on disk under the
     * key is kept if it holds the same identity (the put is then a no-op); if it holds another
     * block's identity (a hash collision) nothing is stored and the record is kept for its own
     * block (counted in {@link DiskStats#collisions()}): the caller keeps its bytes.
     *
     * @param hashHi   block hash, high 64 bits
     * @param hashLo   block hash, low 64 bits
     * @param identity the block's identity ({@link BlockIdentity}: context, parent hash, then its
     *                 token ids as native-order {@code int}s, at most
     *                 {@link KvLayout#blockSizeTokens()} of them, normally exactly that many)
     * @param block    the block's bytes, at most {@link KvLayout#bytesPerBlock()} (normally exactly)
     * @return true if the block is on disk now (written, or already there with this identity);
     *     false if the admission filter declined a first sighting, or another identity holds the key
     * @throws DiskFullException when no segment could be reserved (the file system is full or
     *     below one segment of usable space); nothing was stored, though records may have been
     *     evicted while making room
     * @throws CapacityExhaustedException when pinned records hold the room that eviction would
     *     need ({@link DiskStats#pinRefusals()}); nothing was stored and nothing evicted
     * @throws IllegalArgumentException if {@code identity} is not {@code 32 + 4T} bytes with
     *     {@code T <= blockSizeTokens}, or {@code block} is longer than {@code bytesPerBlock}
     * @throws IllegalStateException if the tier is closed
     * @throws UncheckedIOException if writing failed (nothing was stored)
     */
    public boolean put(long hashHi, long hashLo, MemorySegment identity, MemorySegment block) {
        return store(hashHi, hashLo, identity, block, false) != NO_PIN;
    }

    /**
     * Stores a sealed block under its hash and pins its record in the same step (no eviction can
     * come between the write and the pin). Every put of a key already on disk compares that
     * record's header and identity; a pinning put also verifies its CRC32C (one pass, no copy),
     * since the caller is about to drop its own copy: a damaged record is quarantined (a counted
     * get and corrupt miss; its pins become broken pins) and the block written anew. Otherwise as
     * {@link #put(long, long, MemorySegment, MemorySegment)}.
     *
     * @param hashHi   block hash, high 64 bits
     * @param hashLo   block hash, low 64 bits
     * @param identity the block's identity ({@link BlockIdentity}, at most
     *                 {@link KvLayout#blockSizeTokens()} token ids)
     * @param block    the block's bytes, at most {@link KvLayout#bytesPerBlock()}
     * @return the pin ({@link RecordPins#pin}) on the record that holds the block now (new or already
     *     there); {@link #NO_PIN} if the admission filter declined a first sighting or another
     *     identity holds the key (nothing stored or pinned)
     * @throws DiskFullException when no segment could be reserved; nothing stored or pinned
     * @throws CapacityExhaustedException when pinned records hold the room that eviction would
     *     need; nothing stored, pinned or evicted
     * @throws IllegalArgumentException if {@code identity} is not {@code 32 + 4T} bytes with
     *     {@code T <= blockSizeTokens}, or {@code block} is longer than {@code bytesPerBlock}
     * @throws IllegalStateException if the tier is closed
     * @throws UncheckedIOException if writing failed (nothing stored or pinned)
     */
    public long putPinned(long hashHi, long hashLo, MemorySegment identity, MemorySegment block) {
        return store(hashHi, hashLo, identity, block, true);
    }

    /** Stores, and pins if asked; returns the serial of the record holding the block, or {@link #NO_PIN}. */
    private long store(long hashHi, long hashLo, MemorySegment identity, MemorySegment block, boolean pin) {
        int tokens = checkIdentity(identity);
        Objects.requireNonNull(block, "block");
        if (block.byteSize() > maxRaw) {
            throw new IllegalArgumentException("block: " + block.byteSize() + " bytes (expected <= bytesPerBlock "
                    + maxRaw + ")");
        }
        long serial = NO_PIN;
        lock.lock();
        try {
            ensureOpen();
            if (putLocked(hashHi, hashLo, identity, tokens, block, pin)) {
                int slot = index.find(hashHi, hashLo);
                if (pin) {
                    space.pin(slot);
                }
                serial = index.serial[slot];
            }
        } finally {
            lock.unlock();
        }
        notices.deliver();
        return serial;
    }

    /**
     * Writes a record unless the key holds this identity already. An existing record of another
     * identity refuses the put; a damaged one (quarantined by the check) is written anew. A
     * pinning put (the block is referenced and the record is about to be its only copy) also
     * verifies a matching record's payload; other puts trust it.
     */
    private boolean putLocked(long hi, long lo, MemorySegment identity, int tokenCount, MemorySegment block,
            boolean pin) {
        if (index.find(hi, lo) != RecordIndex.NONE) {
            int found = reader.compare(hi, lo, identity, pin);
            if (found == 0) {
                counters.putsExisting++;
                return true;
            }
            if (found == COLLISION) {
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

    /** Checks an identity's shape: {@code 32 + 4T} bytes, {@code T <= blockSizeTokens}; returns T. */
    private int checkIdentity(MemorySegment identity) {
        Objects.requireNonNull(identity, "identity");
        int tokens = BlockIdentity.tokenCount(identity.byteSize());
        if (tokens < 0 || tokens > maxTokens) {
            throw new IllegalArgumentException("identity: " + identity.byteSize() + " bytes (expected "
                    + BlockIdentity.KEY_BYTES + " + 4 x T for T <= " + maxTokens + " token ids, at most "
                    + BlockIdentity.bytes(maxTokens) + ")");
        }
        return tokens;
    }

    /**
     * Loads a block. Same as {@link #load} but answers only whether it hit.
     *
     * @param hashHi   block hash, high 64 bits
     * @param hashLo   block hash, low 64 bits
     * @param identity the identity expected ({@link BlockIdentity})
     * @param blockOut receives the block's bytes
     * @return true on a verified hit of that identity; false on a miss (including a quarantined
     *     corrupt record and a record of another identity)
     * @throws IllegalArgumentException if {@code blockOut} is smaller than the stored block, or the
     *     identity is malformed
     * @throws IllegalStateException if the tier is closed
     */
    public boolean get(long hashHi, long hashLo, MemorySegment identity, MemorySegment blockOut) {
        return load(hashHi, hashLo, identity, blockOut) >= 0;
    }

    /**
     * Loads a block: verifies the record's header, compares its stored identity with
     * {@code identity}, verifies the CRC32C of its identity and payload, and delivers the block
     * into {@code blockOut}. A record of another identity (a hash collision) is a counted miss
     * ({@link DiskStats#collisions()}) and stays for its own block; no byte of it is copied. A
     * record that fails verification is a counted miss, is quarantined (dropped from the index,
     * journaled, reported to the eviction listener), and no byte of it is left in
     * {@code blockOut} (a raw payload is checked as it is copied, so on a mismatch the first
     * {@code rawLength} bytes of {@code blockOut} are zeroed before the call returns). A hit makes
     * the record most recently used.
     *
     * @param hashHi   block hash, high 64 bits
     * @param hashLo   block hash, low 64 bits
     * @param identity the identity expected ({@link BlockIdentity}: context, parent hash, token ids)
     * @param blockOut receives the block's raw bytes from offset 0; on a miss its contents are
     *                 unspecified (unchanged, or zeroed over the stored length)
     * @return the block's length in bytes on a hit, -1 on a miss, {@link #COLLISION} when a sound
     *     record of another identity holds the key
     * @throws IllegalArgumentException if {@code blockOut} is smaller than the record's block, or
     *     the identity is malformed
     * @throws IllegalStateException if the tier is closed
     * @throws UncheckedIOException if reading the segment file failed
     */
    public int load(long hashHi, long hashLo, MemorySegment identity, MemorySegment blockOut) {
        checkIdentity(identity);
        Objects.requireNonNull(blockOut, "blockOut");
        int result;
        lock.lock();
        try {
            ensureOpen();
            result = reader.read(hashHi, hashLo, identity, blockOut);
        } finally {
            lock.unlock();
        }
        notices.deliver();
        return result;
    }

    /** {@link #match} result: the key is not on disk. */
    public static final int ABSENT = -1;
    /** {@link #match} result: the key's record is damaged; the record is quarantined. */
    public static final int DAMAGED = -2;
    /** {@link #match} and {@link #load} result: a sound record of another identity holds the key. */
    public static final int COLLISION = -3;

    /**
     * Tells whether the key's record holds {@code identity}, without reading its payload: the
     * header is validated (magic, version, layout fingerprint, lengths, header checksum, the hash
     * asked for) and the stored identity compared; the payload's CRC32C is checked by the
     * {@link #load} that delivers the bytes (the identity is covered by it). For a caller that
     * binds a record now and reads its bytes later (a prefix match). A stored identity that
     * differs is verified first: sound, it is a {@link #COLLISION} (counted as in {@link #load});
     * damaged, the record is quarantined ({@link #DAMAGED}). A bad header is quarantined and
     * counted as in {@link #load} (a get, a miss and a corrupt miss); a hit makes the record most
     * recently used and counts no get.
     *
     * @param hashHi   block hash, high 64 bits
     * @param hashLo   block hash, low 64 bits
     * @param identity the identity expected ({@link BlockIdentity})
     * @return the record's token count if it holds that identity, {@link #ABSENT} if the key is not
     *     on disk, {@link #DAMAGED} if its record is bad (quarantined now), or {@link #COLLISION}
     * @throws IllegalArgumentException if the identity is malformed
     * @throws IllegalStateException if the tier is closed
     */
    public int match(long hashHi, long hashLo, MemorySegment identity) {
        checkIdentity(identity);
        int result;
        lock.lock();
        try {
            ensureOpen();
            result = reader.match(hashHi, hashLo, identity);
        } finally {
            lock.unlock();
        }
        notices.deliver();
        return result;
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

    /** {@return the pins on this tier's records: pin, unpin, broken pins, their check} */
    public RecordPins pinning() {
        return pinning;
    }

    /** {@return eviction by LRU order, compaction, key visits, record sizes and page-cache drops} */
    public DiskMaintenance maintenance() {
        return maintenance;
    }

    /** {@link RecordPins#pin} and {@link #putPinned} result: no pin was taken. Record serials start at 1. */
    public static final long NO_PIN = 0;

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
                space.drop(slot, SpaceManager.Cause.REMOVE);
                removed = true;
            }
        } finally {
            lock.unlock();
        }
        notices.deliver(); // records quarantined by a compaction that made journal room
        return removed;
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
            return segments.usedBytes;
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
            return counters.snapshot(closed ? 0 : segments.usedBytes, options.budgetBytes(),
                    closed ? 0 : index.size(), closed ? 0 : index.pinnedCount(), segments.count());
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
            InvariantCheck.check(index, segments, space.journal(), counters.liveBytes, options.budgetBytes(),
                    directory.ownFiles());
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
            corruptionLog.summary();
            boolean keep = options.persistent();
            segments.closeAll(keep);
            DeletionJournal journal = space.journal();
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
            directory.release(!keep);
            departures.close();
            scratchArena.close();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "DiskTier[" + dir + ", " + (closed ? "closed" : index.size() + " blocks, " + segments.usedBytes + "/"
                + options.budgetBytes() + " B") + "]";
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("disk tier " + dir + " is closed");
        }
    }

    // ------------------------------------------------------------------------------ for tests

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
            for (int slot = index.first(); slot != RecordIndex.NONE; slot = index.after(slot)) {
                Segment seg = segments.at(index.segment[slot]);
                long off = index.offset[slot];
                long used = DiskFormat.payloadOffset(RecordHeaders.recordTokenCount(seg.map, off))
                        + RecordHeaders.recordStoredLength(seg.map, off);
                out.add(new RecordLocation(index.hashHi[slot], index.hashLo[slot], seg.file, off, used));
            }
            return out;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The tier's log of damaged bytes, for tests.
     *
     * @return the log (its counts per kind)
     */
    CorruptionLog corruptionLog() {
        return corruptionLog;
    }

    /**
     * Paths of the segment files now, for tests.
     *
     * @return the paths
     */
    List<Path> segmentFiles() {
        lock.lock();
        try {
            return segments.files();
        } finally {
            lock.unlock();
        }
    }
}
