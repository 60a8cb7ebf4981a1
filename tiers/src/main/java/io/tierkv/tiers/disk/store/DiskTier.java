package io.tierkv.tiers.disk.store;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.core.KvLayout;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.error.DiskFullException;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.DiskStats;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32C;

/**
 * The disk tier: sealed KV blocks kept in memory-mapped segment files under a byte budget, keyed
 * by their 128-bit block hash, optionally persistent across restarts.
 *
 * <p>The tier's design (its terms, the bytes on disk, the spill and load paths, eviction and
 * compaction, pins, persistence and recovery) is in this package's overview ({@code package-info});
 * this comment keeps what a caller of this class relies on.
 *
 * <h2>Concurrency</h2>
 * Thread-safe: every public method runs under one {@link ReentrantLock}, so spills, loads, evictions
 * and compaction are serialised (a load copies and checksums under the lock; at 1 MiB blocks that is a
 * fraction of a millisecond). Copying outside the lock would need a pin per segment that holds off
 * compaction, recycling and deletion while a reader copies, since all three rewrite bytes of live
 * segments in place. Eviction listener calls happen after the lock is released, on the thread whose
 * call caused them, in eviction order; a listener may call back into the tier.
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

    final ReentrantLock lock = new ReentrantLock();
    final DiskOptions options;
    private final KvLayout layout;
    private final Path dir;
    private final int maxRaw;
    private final RecordRules rules;
    private final Arena scratchArena = Arena.ofShared();
    @GuardedBy("lock") private final CRC32C crc = new CRC32C();
    @GuardedBy("lock") private final DiskCounters counters = new DiskCounters();
    final EvictionNotices notices = new EvictionNotices();
    /** The log of damaged bytes (tests read its counts). */
    @GuardedBy("lock") final CorruptionLog corruptionLog;
    @GuardedBy("lock") final RecordIndex index;
    @GuardedBy("lock") final Puts puts;
    @GuardedBy("lock") final SegmentTable segments;
    @GuardedBy("lock") final SpaceManager space;
    @GuardedBy("lock") final Departures departures;
    @GuardedBy("lock") private final RecordWriter writer;
    @GuardedBy("lock") private final RecordReader reader;

    /** The key space asked for at open, then the one the directory records. */
    private KeySpace keySpace;
    @GuardedBy("lock") private TierDirectory directory;
    @GuardedBy("lock") private boolean closed;
    private final RecordPins pinning = new RecordPins(this);
    private final DiskMaintenance maintenance = new DiskMaintenance(this);

    private DiskTier(DiskOptions options, KvLayout layout, KeySpace keySpace) {
        this.keySpace = keySpace;
        this.options = options;
        this.layout = layout;
        this.dir = options.directory();
        this.maxRaw = layout.bytesPerBlock();
        this.rules = RecordRules.of(layout);
        this.corruptionLog = new CorruptionLog(dir);
        long expectedRecords = Math.max(16, options.budgetBytes() / DiskFormat.maxRecordBytes(layout));
        this.index = new RecordIndex((int) Math.min(RecordIndex.INITIAL_CAPACITY, expectedRecords));
        this.segments = new SegmentTable(options, rules.fingerprint(), crc, counters);
        Compactor compactor = new Compactor(index, segments, rules, crc, counters, corruptionLog);
        this.departures = new Departures(rules, index, segments, options, layout.dtype().sizeBytes());
        this.space = new SpaceManager(options, index, segments, compactor, counters, notices, departures);
        BlockCodec codec = new BlockCodec(options.compression(), options.shuffle(), layout.dtype().sizeBytes(), maxRaw,
                scratchArena);
        PageResidency residency = new PageResidency(scratchArena, DiskFormat.maxRecordBytes(layout));
        this.writer = new RecordWriter(rules, codec, index, space, crc, counters, scratchArena, residency);
        this.reader = new RecordReader(rules, codec, index, segments, space, crc, counters, residency, corruptionLog);
        this.puts = new Puts(index, space, writer, reader, counters,
                options.admitOnSecondSight() ? new AdmissionFilter(4 * expectedRecords) : null);
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
        options.checkFor(layout);
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new UnsupportedOperationException("the disk tier's files are little-endian; this platform is "
                    + ByteOrder.nativeOrder());
        }
        long journalCapacity = options.persistent() ? DiskFormat.journalCapacity(options.budgetBytes(), layout) : 0;
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

    @SuppressWarnings("GuardedBy") // runs inside open(), before the tier is handed to any other thread
    private void start(long journalCapacity) {
        directory = TierDirectory.lock(dir);
        keySpace = directory.prepare(options, layout, keySpace, crc);
        segments.usedBytes = DiskFormat.META_BYTES;
        if (options.persistent()) {
            new Recovery(directory, options, rules, crc, index, segments, space, counters, corruptionLog)
                    .run(journalCapacity);
        }
        index.finishLoading(); // sized for what recovery found; grows gradually from here
        notices.clear(); // recovery's budget evictions concern no listener yet
    }

    /** Releases everything after a failed open; the caller rethrows. */
    @SuppressWarnings("GuardedBy") // runs inside open(), before the tier is handed to any other thread
    private void abandon() {
        segments.abandon();
        if (space.journal() != null) {
            space.journal().close();
        }
        if (directory != null) {
            directory.releaseAfterFailedOpen();
        }
        scratchArena.close();
        closed = true;
    }

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

    /** Stores, and pins if asked; returns the pin if pinning, {@link #NO_PIN} if nothing was stored. */
    private long store(long hashHi, long hashLo, MemorySegment identity, MemorySegment block, boolean pin) {
        int tokens = rules.checkIdentity(identity);
        Objects.requireNonNull(block, "block");
        if (block.byteSize() > maxRaw) {
            throw new IllegalArgumentException("block: " + block.byteSize() + " bytes (expected <= bytesPerBlock "
                    + maxRaw + ")");
        }
        long serial;
        lock.lock();
        try {
            ensureOpen();
            serial = puts.put(hashHi, hashLo, identity, tokens, block, pin);
        } finally {
            lock.unlock();
        }
        notices.deliver();
        return serial;
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
        rules.checkIdentity(identity);
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
        rules.checkIdentity(identity);
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

    /**
     * {@link RecordPins#pin} and {@link #putPinned} result: no pin was taken. Pin serials start at
     * 1, so 0 is also the cache's record of no pin ({@code BlockOwner.NO_DISK_PIN}).
     */
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
        lock.lock(); // the counts change under it
        try {
            return "DiskTier[" + dir + ", " + (closed ? "closed" : index.size() + " blocks, " + segments.usedBytes + "/"
                    + options.budgetBytes() + " B") + "]";
        } finally {
            lock.unlock();
        }
    }

    @GuardedBy("lock")
    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("disk tier " + dir + " is closed");
        }
    }
}
