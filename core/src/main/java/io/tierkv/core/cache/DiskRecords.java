package io.tierkv.core.cache;

import java.lang.foreign.MemorySegment;

/**
 * The disk below the host tier as the cache's moves drive it ({@link LowerTier#diskRecords}): a
 * store of records keyed by block hash, each written with the block's identity and read back only
 * for exactly that identity, and pins that keep a record from being evicted while it may be a
 * referenced block's only copy. The store
 * decides nothing about a block: which block spills, and when an id pins or lets go of its
 * record, the cache decides ({@code DiskCopies}, {@link MoveBelow}). It never calls the cache or
 * another tier; records it evicts on its own reach the cache as departed keys ({@link
 * LowerTier#drainChanges}) and, verified, the store below through the sink the cache gives it
 * ({@link #setDepartures}).
 *
 * <p>A pin names one record (a serial the store hands out, {@code > 0}), never a key: a key may
 * hold a new record after the pinned one went. A pinned record that fails verification or is
 * removed leaves a broken pin ({@link #pinBroken}), still to be released by {@link #unpin}.
 *
 * <p>Thread-safe. The cache calls every method but {@link #write}, {@link #load}, {@link #stage}
 * and {@link #read} with its lock held (the cache lock comes before the store's own locks); those
 * it calls with it released.
 */
public interface DiskRecords {

    /** No pin: what {@link #pin} returns for a key that is not on disk; a pin is never 0. */
    long NO_PIN = 0;
    /** {@link #write} stored nothing: the store declined, refused or failed the write (counted by the store). */
    long NOT_STORED = NO_PIN;
    /** {@link #write} without a pin stored the record. */
    long STORED = -1;
    /** A read's result ({@link #load}, {@link #stage}, {@link #read}): {@code out} holds the block's bytes. */
    int LOADED = 0;
    /** A read's result: no sound record under the key (missing, evicted, damaged); a counted miss. */
    int MISSED = 1;
    /** A read's result: the record under the key is another identity's (a counted miss). */
    int FOREIGN = 2;

    /**
     * Writes a block's record under its hash, with its identity, pinned in the same call if
     * {@code pin} (the record may be the block's only copy once the host slot goes). A record of
     * another identity under the key refuses the write. Called with the cache lock released, the
     * block in transit and its source host slot held.
     *
     * @param blockId  the block, for the store's own counters and events only (records are keyed by hash)
     * @param hashHi   block hash, high 64 bits
     * @param hashLo   block hash, low 64 bits
     * @param identity the block's identity, {@code BlockIdentity.bytes(blockSizeTokens)} bytes
     * @param block    the block's bytes, {@code KvLayout.bytesPerBlock()}
     * @param pin      whether to pin the record as it is written
     * @return the pin ({@code > 0}) if {@code pin}; {@link #STORED} if stored without one; {@link
     *     #NOT_STORED} if nothing was stored
     */
    long write(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment block, boolean pin);

    /**
     * Reads a block's record into {@code out}, its identity compared with {@code identity} and its
     * checksum verified before any byte stays there; the record stays. Called with the cache lock
     * released, the block in transit and the destination held (a host slot the cache reserved).
     *
     * @param blockId  the block, for the store's own counters and events only
     * @param hashHi   block hash, high 64 bits
     * @param hashLo   block hash, low 64 bits
     * @param identity the identity the record must carry
     * @param out      receives the block's {@code KvLayout.bytesPerBlock()} bytes from offset 0
     * @return {@link #LOADED}, {@link #MISSED} or {@link #FOREIGN}; on a miss no byte of another
     *     block is left in {@code out}
     */
    int load(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment out);

    /**
     * Reads a block's record into a staging buffer on its way up to the top tier (a promotion of
     * a block held on disk alone), as {@link #load} does; counted as a disk-to-device move.
     *
     * @param blockId  the block, for the store's own counters and events only
     * @param hashHi   block hash, high 64 bits
     * @param hashLo   block hash, low 64 bits
     * @param identity the identity the record must carry
     * @param out      the staging buffer's bytes, {@code KvLayout.bytesPerBlock()}
     * @return {@link #LOADED}, {@link #MISSED} or {@link #FOREIGN}
     */
    int stage(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment out);

    /**
     * Reads a block's record out to caller memory (a whole-block read that does not move the
     * block), as {@link #load} does; only what the store counts differs (a read, not a load into a
     * host slot).
     *
     * @param blockId  the block, for the store's own counters and events only
     * @param hashHi   block hash, high 64 bits
     * @param hashLo   block hash, low 64 bits
     * @param identity the identity the record must carry
     * @param out      receives the block's {@code KvLayout.bytesPerBlock()} bytes from offset 0
     * @return {@link #LOADED}, {@link #MISSED} or {@link #FOREIGN}
     */
    int read(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment out);

    /**
     * Finds a record of exactly this identity for an adoption (a prefix match binding a record
     * the cache's index does not hold, for example one recovered at a restart, to a fresh id), with
     * the cache lock held: it never waits. A record whose stored identity differs is verified
     * before it is called another identity's: damaged identity bytes are a counted miss, never a
     * collision that would keep the hash from the block computed again. With {@link
     * #verifiesOnAdopt} the record's bytes are read and verified once: into {@code into} if given
     * (a host slot the cache reserved), else through a transfer buffer of the store's own if one is
     * free, else only its header and identity are read (the read that follows verifies the
     * payload, as without {@link #verifiesOnAdopt}). Counted as an adoption on a hit.
     *
     * @param blockId  the fresh id, for the store's own counters and events only
     * @param hashHi   block hash, high 64 bits
     * @param hashLo   block hash, low 64 bits
     * @param identity the identity the caller expects
     * @param into     a host slot's bytes to read the record into, or null
     * @return {@link #LOADED} (a record of that identity; {@code into}, if given, holds its
     *     bytes), {@link #MISSED} (none, or damaged: a counted miss) or {@link #FOREIGN} (a sound
     *     record of another identity: a collision, not counted as a miss)
     */
    int adopt(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment into);

    /**
     * {@return whether {@link #adopt} reads and verifies a record's bytes (for promotion on match),
     * so that a free host slot is worth lending it; else it reads header and identity only}
     */
    boolean verifiesOnAdopt();

    /**
     * {@return whether a record is held under the key (of any identity)}
     *
     * @param hashHi block hash, high 64 bits
     * @param hashLo block hash, low 64 bits
     */
    boolean contains(long hashHi, long hashLo);

    /**
     * Pins a key's record; each pin needs its own {@link #unpin}.
     *
     * @param hashHi block hash, high 64 bits
     * @param hashLo block hash, low 64 bits
     * @return the pin, {@code > 0}; {@link #NO_PIN} if the key is not on disk
     */
    long pin(long hashHi, long hashLo);

    /**
     * Releases a pin: from its record if that is still on disk, else the broken pin its removal
     * left. Never touches another record under the same key.
     *
     * @param hashHi block hash, high 64 bits
     * @param hashLo block hash, low 64 bits
     * @param pin    the pin {@link #pin} or {@link #write} returned for this key
     * @return true if a pin was dropped from its record; false if a broken pin was released
     * @throws IllegalStateException if the pin holds nothing (released twice, or never taken)
     */
    boolean unpin(long hashHi, long hashLo, long pin);

    /**
     * {@return whether a held pin's record was dropped (removed, or quarantined when it failed
     * verification) since the pin was taken}
     *
     * @param pin a pin held
     */
    boolean pinBroken(long pin);

    /**
     * Compares, in one call, the pins their holders hold with the store's own: each handle held
     * as many times as it counts, every pinned record and every broken pin among them.
     *
     * @param hashHi  per handle, its key's high 64 bits
     * @param hashLo  per handle, its key's low 64 bits
     * @param pins    the distinct pins held
     * @param holders per pin, how many ids hold it
     * @param n       pins in the arrays
     * @return the first difference, or null if they agree
     */
    String checkPins(long[] hashHi, long[] hashLo, long[] pins, int[] holders, int n);

    /**
     * Sets where the records this store evicts on its own (for room, or by its budget) go,
     * verified, just before their bytes do: how a block leaving the lowest local tier reaches the
     * store below it ({@link RemoteRecords#offer}). A record that fails verification is not handed
     * on. The cache sets it once, before any block moves; the store calls nothing else.
     *
     * @param departures where evicted records go, or null for nowhere
     */
    void setDepartures(Departures departures);

    /** Receives the records a disk store evicts, verified, just before their bytes go. */
    @FunctionalInterface
    interface Departures {
        /**
         * A verified record is about to be evicted. Called with the store's own lock held: copy
         * what is kept and return at once (never block, never call the store). The segments are
         * valid for the call only.
         *
         * @param hashHi   block hash, high 64 bits
         * @param hashLo   block hash, low 64 bits
         * @param identity the record's identity
         * @param block    the block's bytes, decoded, {@code KvLayout.bytesPerBlock()}
         */
        void departing(long hashHi, long hashLo, MemorySegment identity, MemorySegment block);
    }
}
