package io.tierkv.remote;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.tierkv.core.StoreStats;
import io.tierkv.core.spi.BlockStore;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The remote tier's block store: sealed blocks on a Valkey/Redis server or cluster, reached
 * through Lettuce, below the disk tier (DESIGN.md, "Remote tier"). A leaf store: keyed by block
 * hash, it answers how many leading keys of a chain it holds, stores and reads blocks, and never
 * decides residency or calls another tier.
 *
 * <h2>Terms and bytes</h2>
 * A block is named by its 128-bit hash ({@code hashHi}, {@code hashLo}) and proven by its
 * identity (the {@code BlockIdentity} bytes of core: context fingerprint, parent hash, token ids;
 * opaque here, compared byte for byte). One Redis string per block,
 * key {@code tierkv:v1:<namespace>:<layout fingerprint, 16 hex>:<hash, 32 hex>} (no hash tag, so
 * blocks spread over cluster slots), value:
 * <pre>
 * +--------------------------- 28-byte header, little-endian ---------------------------+----------+---------+
 * | magic "TKVR" | version 1 | flags | layout fingerprint | id len I | payload len P | CRC32C | identity | payload |
 * |      4       |     2     |   2   |         8          |    4     |       4       |   4    |    I     |    P    |
 * +--------------------------------------------------------------------------------------+----------+---------+
 * </pre>
 * ({@link ValueFormat}; CRC32C over identity then payload.) Writes copy the caller's off-heap
 * memory once, into Netty's command buffer; reads copy once, from Netty's receive buffer into the
 * caller's destination ({@link RemoteCodec}, {@link BlockReadOutput}): no {@code byte[]} per block.
 *
 * <h2>Operations</h2>
 * <ul>
 * <li>{@link #lookup}: pipelined {@code EXISTS} along a chain; the count of leading keys present.
 * <li>{@link #put}: write-once {@code SET key value NX [EX ttl]}; a present key is not overwritten.
 * <li>{@link #get}, {@link #getAll}: pipelined {@code GET}s, each value verified in the receive
 *     buffer before its payload is copied: magic, version, layout fingerprint, lengths, CRC32C,
 *     payload length against the destination's size, identity. A damaged value (magic, version,
 *     lengths, CRC, or a key of another type than string, which the server answers with
 *     {@code WRONGTYPE}), a foreign one (another layout) or a mismatched one (another payload
 *     length) is a counted miss and is deleted, so that the block can be stored again; a value with another identity is a hash collision: a
 *     counted miss, kept (it is intact, and its own reader may still want it).
 * </ul>
 *
 * <h2>Eviction</h2>
 * {@link RemoteEviction#SERVER}: the server's {@code maxmemory} policy, nothing sent by the store.
 * {@link RemoteEviction#LRU}: an exact index owned by the store ({@link OwnedLru}: a sorted set
 * trimmed by a Lua script; on a standalone server the script deletes evicted values itself, in a
 * cluster the store deletes them from the client, because the index is one key on one shard and a
 * script may only touch its own slot).
 *
 * <h2>Failures</h2>
 * Every call waits at most {@link RemoteOptions#timeoutNanos()} for all its commands together;
 * {@code lookup} and {@code getAll} also take a caller's deadline, so that the calls of one prefix
 * match (a lookup and a read per round, several rounds) wait at most one timeout together.
 * A timeout or error is a counted miss or a dropped write, never an exception. A call fails if a
 * command timed out or got no answer (connection lost, refused while disconnected); after
 * {@link RemoteOptions#breakerFailures()} consecutive failed calls the breaker opens: calls return
 * misses and drop writes without touching the network, until a probe after
 * {@link RemoteOptions#breakerOpenNanos()} succeeds. An error reply ({@code OOM} when the server's
 * {@code maxmemory} is reached under {@code noeviction}, {@code READONLY}, any {@code -ERR}) comes
 * from a live server at once: it is counted ({@code errorReplies}; a put so answered also in
 * {@code putsDropped}) and is not a breaker failure, so a server refusing writes still serves
 * lookups and reads. Lettuce reconnects with exponential back-off;
 * while disconnected, commands are refused at once. Writes whose value bytes would take the bytes
 * sent and not yet answered past {@link RemoteOptions#maxInFlightBytes()} are dropped. A call that
 * gave up never reads or writes its caller's memory afterwards ({@link BlockWrite#abandon()},
 * {@link BlockReadOutput#abandon()}). (Memory that Netty still holds for a timed-out write's
 * encoded bytes, while a stalled server does not read them, is bounded by the breaker: at most
 * {@code breakerFailures} calls' worth before it opens.)
 *
 * <p>Thread-safe: one connection shared by every calling thread, as Lettuce intends. Opening
 * throws {@link RemoteUnavailableException} if the server cannot be reached; after {@link #close()}
 * every call throws {@link IllegalStateException}.
 */
public final class RemoteStore implements BlockStore {

    private final RemoteOptions options;
    private final long fingerprint;
    private final RemoteCodec codec;
    private final RemoteConnection connection;
    private final CircuitBreaker breaker;
    private final RemoteCounters counters = new RemoteCounters();
    private final OwnedLru lru;
    private final AtomicLong inFlightBytes = new AtomicLong();
    private volatile boolean closed;
    private volatile RemovalListener removals;

    private RemoteStore(RemoteOptions options, long fingerprint) {
        this.options = options;
        this.fingerprint = fingerprint;
        this.codec = new RemoteCodec(options.namespace(), fingerprint);
        this.connection = RemoteConnection.open(options, codec);
        this.breaker = new CircuitBreaker(options.breakerFailures(), options.breakerOpenNanos(), System::nanoTime);
        this.lru = options.eviction() == RemoteEviction.LRU
                ? new OwnedLru(connection, codec, counters, options.namespace(), fingerprint,
                        options.lruCapacityBlocks())
                : null;
    }

    /**
     * Connects to the server or cluster and returns a store for one layout.
     *
     * @param options           validated options
     * @param layoutFingerprint the layout's {@code KvLayout.fingerprint()}: part of every key and
     *                          checked in every value read
     * @return the open store
     * @throws NullPointerException       if {@code options} is null
     * @throws RemoteUnavailableException if the first connection fails
     */
    public static RemoteStore open(RemoteOptions options, long layoutFingerprint) {
        return new RemoteStore(Objects.requireNonNull(options, "options"), layoutFingerprint);
    }

    /** {@return the options this store was opened with} */
    public RemoteOptions options() {
        return options;
    }

    /** {@return the layout fingerprint this store reads and writes} */
    public long layoutFingerprint() {
        return fingerprint;
    }

    /**
     * {@return the key of a block as the server sees it (for tools and tests)}
     *
     * @param hashHi the block hash's high word
     * @param hashLo the block hash's low word
     */
    public String keyOf(long hashHi, long hashLo) {
        return RemoteCodec.blockKeyPrefix(options.namespace(), fingerprint) + RemoteCodec.hashHex(hashHi, hashLo);
    }

    /**
     * Counts how many leading blocks of a chain the server holds: one pipelined {@code EXISTS} per
     * key, the count stopping at the first absent key. Does not touch the owned LRU (a lookup is
     * not a use). A timeout, error or open breaker ends the count where it is (0 if refused). Waits
     * at most until {@code deadlineNanos} and never longer than the timeout; a deadline already
     * passed sends nothing and counts one timeout. (Without a deadline: {@link
     * io.tierkv.core.spi.BlockStore#lookup(long[], long[], int)}, the timeout from now.)
     *
     * @param hashHi        hash high words, in chain order
     * @param hashLo        hash low words
     * @param count         how many keys, from index 0: {@code 0 <= count <= min(hashHi.length, hashLo.length)}
     * @param deadlineNanos when to stop waiting, on {@link System#nanoTime()}'s clock
     * @return the number of leading keys present, in [0, count]
     * @throws IllegalArgumentException if {@code count} is out of range
     * @throws IllegalStateException    after {@link #close()}
     */
    @Override
    public int lookup(long[] hashHi, long[] hashLo, int count, long deadlineNanos) {
        checkOpen();
        checkCount(count, hashHi.length, hashLo.length, Integer.MAX_VALUE, Integer.MAX_VALUE);
        counters.lookups.increment();
        if (count == 0 || pastDeadline(deadlineNanos) || !breaker.tryAcquire()) {
            return 0;
        }
        RemoteCall call = new RemoteCall(breaker, counters, options.timeoutNanos(), deadlineNanos);
        @SuppressWarnings("unchecked")
        RedisFuture<Long>[] exists = new RedisFuture[count];
        for (int i = 0; i < count; i++) {
            exists[i] = connection.dispatch(CommandType.EXISTS, new IntegerOutput<>(codec),
                    new CommandArgs<>(codec).addKey(new RemoteKey.Block(hashHi[i], hashLo[i])));
        }
        int found = 0;
        while (found < count && call.await(exists[found]) && exists[found].resultNow() == 1L) {
            found++;
        }
        call.finish();
        counters.lookupKeysFound.add(found);
        return found;
    }

    /**
     * Stores a block once: {@code SET key value NX}, with {@code EX ttl} if a TTL is set; with the
     * owned LRU, indexes it and evicts beyond capacity within the same call. The caller's
     * segments are read only during this call, never after it returns.
     *
     * @param hashHi   the block hash's high word
     * @param hashLo   the block hash's low word
     * @param identity the block identity, at most 1 MiB
     * @param src      the payload; header, identity and payload together at most 512 MiB
     * @return true if this call stored the block; false if the key already held a value
     *         (write-once: not overwritten, counted as {@code putsPresent}) or the write was
     *         dropped (breaker open, in-flight bound, timeout, no answer or an error reply such as
     *         {@code OOM}: {@code putsDropped})
     * @throws IllegalArgumentException if a segment is too large
     * @throws IllegalStateException    after {@link #close()}
     */
    public boolean put(long hashHi, long hashLo, MemorySegment identity, MemorySegment src) {
        checkOpen();
        checkValue(identity, src);
        BlockWrite value = new BlockWrite(fingerprint, identity, src);
        long bytes = value.valueBytes();
        if (inFlightBytes.addAndGet(bytes) > options.maxInFlightBytes()) {
            inFlightBytes.addAndGet(-bytes);
            counters.putsDropped.increment();
            return false;
        }
        if (!breaker.tryAcquire()) {
            inFlightBytes.addAndGet(-bytes);
            counters.putsDropped.increment();
            return false;
        }
        RemoteCall call = new RemoteCall(breaker, counters, options.timeoutNanos());
        CommandArgs<RemoteKey, RemoteValue> args = new CommandArgs<>(codec).addKey(new RemoteKey.Block(hashHi, hashLo))
                .addValue(value).add("NX");
        if (options.ttlSeconds() > 0) {
            args.add("EX").add(options.ttlSeconds());
        }
        RedisFuture<String> set = connection.dispatch(CommandType.SET, new StatusOutput<>(codec), args);
        set.whenComplete((r, e) -> inFlightBytes.addAndGet(-bytes));
        if (!call.await(set)) {
            value.abandon();
            call.finish();
            counters.putsDropped.increment();
            return false;
        }
        value.abandon();
        boolean stored = "OK".equals(set.resultNow());
        if (stored) {
            counters.puts.increment();
            counters.bytesWritten.add(src.byteSize());
            if (lru != null) {
                lru.add(call, hashHi, hashLo);
            }
        } else {
            counters.putsPresent.increment();
        }
        call.finish();
        return stored;
    }

    /**
     * Stores blocks once each, pipelined: one {@code SET NX} per block sent before any reply is
     * awaited, then, with the owned LRU, the blocks stored indexed in one script call (in order:
     * {@code [0]} oldest). Each block is as for {@link #put}; a block the in-flight bound refuses
     * is dropped (counted) and the rest still sent. The caller's segments are read only during
     * this call.
     *
     * @param hashHi     hash high words
     * @param hashLo     hash low words
     * @param identities the blocks' identities
     * @param srcs       the payloads
     * @param count      how many blocks, from index 0, at most every array's length
     * @return blocks this call stored (keys already holding a value and dropped writes excluded)
     * @throws IllegalArgumentException if {@code count} is out of range or a segment too large
     * @throws IllegalStateException    after {@link #close()}
     */
    public int putAll(long[] hashHi, long[] hashLo, MemorySegment[] identities, MemorySegment[] srcs, int count) {
        return putAll(hashHi, hashLo, identities, srcs, count, null);
    }

    /**
     * Stores blocks once each, as {@link #putAll(long[], long[], MemorySegment[], MemorySegment[], int)},
     * telling which were stored.
     *
     * @param hashHi     hash high words
     * @param hashLo     hash low words
     * @param identities the blocks' identities
     * @param srcs       the payloads
     * @param count      how many blocks, from index 0, at most every array's length
     * @param stored     if not null, receives per block whether this call stored it (length at
     *                   least {@code count})
     * @return blocks this call stored
     * @throws IllegalArgumentException if {@code count} is out of range, {@code stored} is shorter
     *     than {@code count}, or a segment too large
     * @throws IllegalStateException    after {@link #close()}
     */
    @Override
    public int putAll(long[] hashHi, long[] hashLo, MemorySegment[] identities, MemorySegment[] srcs, int count,
            boolean[] stored) {
        if (stored != null) {
            if (stored.length < count) {
                throw new IllegalArgumentException("stored: " + stored.length + " entries (expected >= count "
                        + count + ")");
            }
            java.util.Arrays.fill(stored, 0, count, false);
        }
        checkOpen();
        checkCount(count, hashHi.length, hashLo.length, identities.length, srcs.length);
        if (count == 0) {
            return 0;
        }
        if (!breaker.tryAcquire()) {
            counters.putsDropped.add(count);
            return 0;
        }
        RemoteCall call = new RemoteCall(breaker, counters, options.timeoutNanos());
        BlockWrite[] values = new BlockWrite[count];
        @SuppressWarnings("unchecked")
        RedisFuture<String>[] sets = new RedisFuture[count];
        for (int i = 0; i < count; i++) {
            checkValue(identities[i], srcs[i]);
            BlockWrite value = new BlockWrite(fingerprint, identities[i], srcs[i]);
            long bytes = value.valueBytes();
            if (inFlightBytes.addAndGet(bytes) > options.maxInFlightBytes()) {
                inFlightBytes.addAndGet(-bytes);
                continue;
            }
            CommandArgs<RemoteKey, RemoteValue> args = new CommandArgs<>(codec)
                    .addKey(new RemoteKey.Block(hashHi[i], hashLo[i])).addValue(value).add("NX");
            if (options.ttlSeconds() > 0) {
                args.add("EX").add(options.ttlSeconds());
            }
            values[i] = value;
            sets[i] = connection.dispatch(CommandType.SET, new StatusOutput<>(codec), args);
            sets[i].whenComplete((r, e) -> inFlightBytes.addAndGet(-bytes));
        }
        long[] storedHi = new long[count];
        long[] storedLo = new long[count];
        int n = 0;
        for (int i = 0; i < count; i++) {
            if (sets[i] == null) {
                counters.putsDropped.increment();
                continue;
            }
            // after a timeout or a lost connection the rest are not waited for; after an error
            // reply (one SET refused, say for memory) they are
            boolean done = !call.broken() && call.await(sets[i]);
            values[i].abandon();
            if (!done) {
                counters.putsDropped.increment();
            } else if ("OK".equals(sets[i].resultNow())) {
                counters.puts.increment();
                counters.bytesWritten.add(srcs[i].byteSize());
                if (stored != null) {
                    stored[i] = true;
                }
                storedHi[n] = hashHi[i];
                storedLo[n++] = hashLo[i];
            } else {
                counters.putsPresent.increment();
            }
        }
        if (lru != null && n > 0 && !call.broken()) {
            lru.addAll(call, storedHi, storedLo, n);
        }
        call.finish();
        return n;
    }

    /**
     * Reads one block into {@code dst}, verified (see the class comment); with the owned LRU, a
     * hit is touched (without waiting). On a miss {@code dst} is not written.
     *
     * @param hashHi   the block hash's high word
     * @param hashLo   the block hash's low word
     * @param identity the identity the caller expects
     * @param dst      where the payload goes; its size must be the block's payload size (the
     *                 layout's bytes per block): a stored payload of another length is a counted
     *                 miss and is deleted
     * @return true if the block was read, verified and copied; false for a counted miss
     * @throws IllegalStateException after {@link #close()}
     */
    public boolean get(long hashHi, long hashLo, MemorySegment identity, MemorySegment dst) {
        checkOpen();
        Objects.requireNonNull(identity, "identity");
        Objects.requireNonNull(dst, "dst");
        counters.gets.increment();
        if (!breaker.tryAcquire()) {
            counters.misses.increment();
            return false;
        }
        RemoteCall call = new RemoteCall(breaker, counters, options.timeoutNanos());
        BlockReadOutput out = new BlockReadOutput(codec, fingerprint, identity, dst);
        RedisFuture<ReadOutcome> f = sendGet(hashHi, hashLo, out);
        ReadOutcome outcome = call.await(f) ? f.resultNow() : ReadOutcome.ABSENT;
        out.abandon();
        call.finish();
        settle(outcome, hashHi, hashLo, true, dst.byteSize());
        if (outcome != ReadOutcome.HIT) {
            return false;
        }
        if (lru != null) {
            lru.touch(new long[] {hashHi}, new long[] {hashLo}, 1);
        }
        return true;
    }

    /**
     * Reads the leading blocks of a chain: pipelined {@code GET}s of all {@code count} blocks,
     * each verified as by {@link #get}; the count of leading blocks read stops at the first miss.
     * With the owned LRU the leading blocks are touched (without waiting), the first of the chain
     * as the most recent.
     * Waits at most until {@code deadlineNanos} and never longer than the timeout; a deadline
     * already passed sends nothing, and counts one timeout and {@code count} misses. (Without a
     * deadline: {@link io.tierkv.core.spi.BlockStore#getAll(long[], long[], MemorySegment[],
     * MemorySegment[], int)}, the timeout from now.)
     *
     * @param hashHi        hash high words, in chain order
     * @param hashLo        hash low words
     * @param identities    the identities the caller expects
     * @param dsts          destinations, each of the block's payload size (as for {@link #get});
     *                      those at and after the returned index may have been written
     * @param count         how many blocks, from index 0, at most every array's length
     * @param deadlineNanos when to stop waiting, on {@link System#nanoTime()}'s clock
     * @return the number of leading blocks read, verified and copied, in [0, count]
     * @throws IllegalArgumentException if {@code count} is out of range
     * @throws IllegalStateException    after {@link #close()}
     */
    @Override
    public int getAll(long[] hashHi, long[] hashLo, MemorySegment[] identities, MemorySegment[] dsts, int count,
            long deadlineNanos) {
        checkOpen();
        checkCount(count, hashHi.length, hashLo.length, identities.length, dsts.length);
        counters.gets.add(count);
        if (count == 0) {
            return 0;
        }
        if (pastDeadline(deadlineNanos) || !breaker.tryAcquire()) {
            counters.misses.add(count);
            return 0;
        }
        RemoteCall call = new RemoteCall(breaker, counters, options.timeoutNanos(), deadlineNanos);
        BlockReadOutput[] outs = new BlockReadOutput[count];
        @SuppressWarnings("unchecked")
        RedisFuture<ReadOutcome>[] gets = new RedisFuture[count];
        for (int i = 0; i < count; i++) {
            outs[i] = new BlockReadOutput(codec, fingerprint, Objects.requireNonNull(identities[i], "identities[i]"),
                    Objects.requireNonNull(dsts[i], "dsts[i]"));
            gets[i] = sendGet(hashHi[i], hashLo[i], outs[i]);
        }
        int leading = 0;
        for (int i = 0; i < count; i++) {
            ReadOutcome outcome;
            if (leading == i) {
                outcome = call.await(gets[i]) ? gets[i].resultNow() : ReadOutcome.ABSENT;
            } else {
                outcome = gets[i].state() == Future.State.SUCCESS ? gets[i].resultNow()
                        : ReadOutcome.ABSENT;
            }
            outs[i].abandon();
            if (outcome == ReadOutcome.HIT && leading == i) {
                leading++;
            } else if (outcome != ReadOutcome.HIT) {
                settle(outcome, hashHi[i], hashLo[i], false, 0);
            }
        }
        call.finish();
        counters.hits.add(leading);
        counters.misses.add(count - leading);
        for (int i = 0; i < leading; i++) {
            counters.bytesRead.add(dsts[i].byteSize());
        }
        if (lru != null && leading > 0) {
            lru.touch(hashHi, hashLo, leading);
        }
        return leading;
    }

    /** Counts one timeout, sending nothing, if the caller's deadline has passed; the breaker is not told. */
    private boolean pastDeadline(long deadlineNanos) {
        if (deadlineNanos - System.nanoTime() > 0) {
            return false;
        }
        counters.timeouts.increment();
        return true;
    }

    /** {@return the longest one call waits, {@link RemoteOptions#timeoutNanos()}} */
    @Override
    public long timeoutNanos() {
        return options.timeoutNanos();
    }

    /** {@inheritDoc} Here: the owned LRU's evictions, and values deleted as damaged, foreign or mismatched. */
    @Override
    public void setRemovalListener(RemovalListener listener) {
        this.removals = listener;
        if (lru != null) {
            lru.setRemovalListener(listener);
        }
    }

    /** {@return a snapshot of the counters and the breaker's state} */
    public RemoteStats stats() {
        return counters.snapshot(breaker, inFlightBytes.get());
    }

    /**
     * {@return the counters as the tier manager reports them ({@link #stats()}, summed into fewer
     * fields: {@code damaged} is damaged, foreign and mismatched values; {@code errors} is errors
     * and error replies)}
     */
    @Override
    public StoreStats storeStats() {
        RemoteStats s = stats();
        return new StoreStats(s.lookups(), s.lookupKeysFound(), s.gets(), s.hits(), s.puts(), s.putsPresent(),
                s.putsDropped(), s.bytesWritten(), s.bytesRead(),
                s.damagedDeleted() + s.foreignDeleted() + s.mismatchedDeleted(), s.collisions(), s.timeouts(),
                s.errors() + s.errorReplies(), s.breakerState().name());
    }

    /** {@return the server's URL} */
    @Override
    public String describe() {
        return options.url();
    }

    /** Closes the connection and Lettuce's threads; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        connection.close();
    }

    private RedisFuture<ReadOutcome> sendGet(long hi, long lo, BlockReadOutput out) {
        return connection.dispatch(CommandType.GET, out, new CommandArgs<>(codec).addKey(new RemoteKey.Block(hi, lo)));
    }

    /**
     * Counts one read's outcome; deletes a damaged, foreign or mismatched value without waiting.
     * With {@code single} the hit or miss is counted too ({@code getAll} counts its own).
     */
    private void settle(ReadOutcome outcome, long hi, long lo, boolean single, long hitBytes) {
        if (outcome == ReadOutcome.HIT) {
            if (single) {
                counters.hits.increment();
                counters.bytesRead.add(hitBytes);
            }
            return;
        }
        if (single) {
            counters.misses.increment();
        }
        counters.countMissReason(outcome);
        if (outcome == ReadOutcome.DAMAGED || outcome == ReadOutcome.FOREIGN || outcome == ReadOutcome.MISMATCHED) {
            RemovalListener l = removals;
            if (l != null) {
                l.removed(hi, lo);
            }
            connection.dispatch(CommandType.DEL, new IntegerOutput<>(codec),
                    new CommandArgs<>(codec).addKey(new RemoteKey.Block(hi, lo)))
                    .whenComplete((r, e) -> RemoteCall.countUnwaited(counters, e));
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("RemoteStore: closed (" + options.url() + ")");
        }
    }

    private static void checkCount(int count, int a, int b, int c, int d) {
        int max = Math.min(Math.min(a, b), Math.min(c, d));
        if (count < 0 || count > max) {
            throw new IllegalArgumentException("count: " + count + " (expected 0 <= count <= " + max
                    + ", the shortest array's length)");
        }
    }

    private static void checkValue(MemorySegment identity, MemorySegment src) {
        Objects.requireNonNull(identity, "identity");
        Objects.requireNonNull(src, "src");
        if (identity.byteSize() > ValueFormat.MAX_IDENTITY_BYTES) {
            throw new IllegalArgumentException("identity: " + identity.byteSize() + " bytes (expected <= "
                    + ValueFormat.MAX_IDENTITY_BYTES + ")");
        }
        long max = ValueFormat.MAX_VALUE_BYTES - ValueFormat.HEADER_BYTES - identity.byteSize();
        if (src.byteSize() > max) {
            throw new IllegalArgumentException("src: " + src.byteSize() + " bytes (expected <= " + max
                    + ": 512 MiB less the 28-byte header and the identity)");
        }
    }
}
