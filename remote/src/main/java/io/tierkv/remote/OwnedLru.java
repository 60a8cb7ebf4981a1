package io.tierkv.remote;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * The owned, exact LRU index of {@link RemoteEviction#LRU}: a sorted set of block hashes (32 hex
 * digits) scored by a logical clock, and the clock, both under one hash tag so that one Lua
 * script may touch both in a cluster:
 * <pre>
 *   {tierkv:v1:&lt;namespace&gt;:&lt;fingerprint&gt;}:lru     sorted set: member = hash hex, score = clock at last use
 *   {tierkv:v1:&lt;namespace&gt;:&lt;fingerprint&gt;}:clock   integer: the logical clock
 * </pre>
 * One script ({@link #SCRIPT}, run with {@code EVALSHA}, falling back to {@code EVAL} after
 * {@code NOSCRIPT}, as after a server restart) gives each member the next clock value, then pops
 * the lowest-scored members beyond the capacity and returns them.
 *
 * <p>Where evicted values are deleted: on a standalone server the script deletes them itself, in
 * the same atomic step (the index and the values are never apart). In a cluster a script may only
 * touch keys of one slot, and the values are spread over all slots on purpose, so the script
 * returns the evicted hashes and the store deletes them from the client ({@code DEL} per key,
 * routed to each key's shard) within the same call. A delete that fails leaves an unindexed value
 * that the server's memory policy or TTL removes; it is still served while it lasts. The index is
 * one key on one shard (exact and global: per-shard indexes would have to follow every slot
 * migration), so that shard answers every touch.
 *
 * <p>Touches on a hit ({@code ZADD XX}: only blocks still indexed; an evicted block is never put
 * back) are sent without waiting; adds after a stored put wait within the put's call. A batch is
 * scored from its last block to its first, so a prefix chain is evicted from its tail first, as
 * vLLM's free queue does. With a TTL, an expired value keeps its index entry until trimmed.
 *
 * <p>Thread-safe: every step is one server-side script; the object holds constants only.
 */
final class OwnedLru {

    /**
     * KEYS[1] index, KEYS[2] clock; ARGV[1] capacity, ARGV[2] {@code add} or {@code touch},
     * ARGV[3] value-key prefix whose keys the script deletes, or empty to leave that to the
     * client; ARGV[4..] members, oldest use first. Returns the evicted members.
     */
    static final String SCRIPT = """
            local n = #ARGV - 3
            local clock = redis.call('INCRBY', KEYS[2], n)
            for i = 1, n do
              if ARGV[2] == 'touch' then
                redis.call('ZADD', KEYS[1], 'XX', clock - n + i, ARGV[3 + i])
              else
                redis.call('ZADD', KEYS[1], clock - n + i, ARGV[3 + i])
              end
            end
            local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[1])
            if over <= 0 then
              return {}
            end
            local popped = redis.call('ZPOPMIN', KEYS[1], over)
            local evicted = {}
            for i = 1, #popped, 2 do
              evicted[#evicted + 1] = popped[i]
              if ARGV[3] ~= '' then
                redis.call('DEL', ARGV[3] .. popped[i])
              end
            end
            return evicted
            """;

    /** SHA-1 of {@link #SCRIPT} in hex, its name in the server's script cache. */
    static final String SHA = sha1(SCRIPT);

    private final RemoteConnection connection;
    private final RemoteCodec codec;
    private final RemoteCounters counters;
    private final RemoteKey.Named indexKey;
    private final RemoteKey.Named clockKey;
    private final long capacityBlocks;
    private final String deletePrefix;

    /**
     * An index for one namespace and layout.
     *
     * @param connection     the store's connection
     * @param codec          the store's codec
     * @param counters       the store's counters ({@code lruEvicted}, unwaited failures)
     * @param namespace      the namespace
     * @param fingerprint    the layout fingerprint
     * @param capacityBlocks the most blocks kept
     */
    OwnedLru(RemoteConnection connection, RemoteCodec codec, RemoteCounters counters, String namespace,
            long fingerprint, long capacityBlocks) {
        this.connection = connection;
        this.codec = codec;
        this.counters = counters;
        String tag = "{" + RemoteCodec.blockKeyPrefix(namespace, fingerprint) + "lru}";
        this.indexKey = new RemoteKey.Named((tag + ":index").getBytes(StandardCharsets.US_ASCII));
        this.clockKey = new RemoteKey.Named((tag + ":clock").getBytes(StandardCharsets.US_ASCII));
        this.capacityBlocks = capacityBlocks;
        this.deletePrefix = connection.cluster() ? "" : RemoteCodec.blockKeyPrefix(namespace, fingerprint);
    }

    private volatile io.tierkv.core.spi.BlockStore.RemovalListener removals;

    /** Sets who is told of each key the index evicts; null for none. */
    void setRemovalListener(io.tierkv.core.spi.BlockStore.RemovalListener l) {
        this.removals = l;
    }

    /** {@return the index's key, for tests and diagnostics} */
    String indexKeyName() {
        return new String(indexKey.name(), StandardCharsets.US_ASCII);
    }

    /**
     * Indexes a block just stored, trims the index to capacity and deletes what it evicted, all
     * within the put's call.
     *
     * @param call the put's call
     * @param hi   the block hash's high word
     * @param lo   the block hash's low word
     */
    void add(RemoteCall call, long hi, long lo) {
        addAll(call, new long[] {hi}, new long[] {lo}, 1);
    }

    /**
     * Indexes blocks just stored, in order ({@code hi[0]} oldest), trims the index to capacity
     * and deletes what it evicted, in one script call within the caller's call.
     *
     * @param call  the puts' call
     * @param hi    the block hashes' high words
     * @param lo    the block hashes' low words
     * @param count how many, from index 0, {@code >= 1}
     */
    void addAll(RemoteCall call, long[] hi, long[] lo, int count) {
        RedisFuture<List<RemoteKey.Block>> f = run(CommandType.EVALSHA, members(CommandType.EVALSHA, hi, lo, count));
        if (call.awaitQuietly(f) && noScript(f)) {
            f = run(CommandType.EVAL, members(CommandType.EVAL, hi, lo, count));
        }
        if (!call.await(f)) {
            return;
        }
        List<RemoteKey.Block> evicted = f.resultNow();
        counters.lruEvicted.add(evicted.size());
        io.tierkv.core.spi.BlockStore.RemovalListener l = removals;
        if (l != null) {
            for (RemoteKey.Block k : evicted) {
                l.removed(k.hi(), k.lo());
            }
        }
        if (connection.cluster()) {
            @SuppressWarnings("unchecked")
            RedisFuture<Long>[] deletes = new RedisFuture[evicted.size()];
            for (int i = 0; i < deletes.length; i++) {
                deletes[i] = connection.dispatch(CommandType.DEL, new IntegerOutput<>(codec),
                        new CommandArgs<>(codec).addKey(evicted.get(i)));
            }
            for (RedisFuture<Long> d : deletes) {
                call.await(d);
            }
        }
    }

    private CommandArgs<RemoteKey, RemoteValue> members(CommandType type, long[] hi, long[] lo, int count) {
        CommandArgs<RemoteKey, RemoteValue> args = args(type, "add");
        for (int i = 0; i < count; i++) {
            args.addValue(new RemoteValue.Member(hi[i], lo[i]));
        }
        return args;
    }

    /**
     * Marks blocks as just used, without waiting: {@code hi[count-1]} gets the oldest clock value
     * of the batch and {@code hi[0]} the newest.
     *
     * @param hi    hash high words
     * @param lo    hash low words
     * @param count how many, from index 0
     */
    void touch(long[] hi, long[] lo, int count) {
        CommandArgs<RemoteKey, RemoteValue> args = args(CommandType.EVALSHA, "touch");
        for (int i = count - 1; i >= 0; i--) {
            args.addValue(new RemoteValue.Member(hi[i], lo[i]));
        }
        run(CommandType.EVALSHA, args).whenComplete((r, e) -> {
            if (e != null && e.getMessage() != null && e.getMessage().startsWith("NOSCRIPT")) {
                CommandArgs<RemoteKey, RemoteValue> eval = args(CommandType.EVAL, "touch");
                for (int i = count - 1; i >= 0; i--) {
                    eval.addValue(new RemoteValue.Member(hi[i], lo[i]));
                }
                run(CommandType.EVAL, eval).whenComplete((r2, e2) -> RemoteCall.countUnwaited(counters, e2));
            } else {
                RemoteCall.countUnwaited(counters, e);
            }
        });
    }

    private CommandArgs<RemoteKey, RemoteValue> args(CommandType type, String mode) {
        CommandArgs<RemoteKey, RemoteValue> args = new CommandArgs<>(codec);
        args.add(type == CommandType.EVALSHA ? SHA : SCRIPT).add(2).addKey(indexKey).addKey(clockKey)
                .add(capacityBlocks).add(mode).add(deletePrefix);
        return args;
    }

    private RedisFuture<List<RemoteKey.Block>> run(CommandType type, CommandArgs<RemoteKey, RemoteValue> args) {
        return connection.dispatch(type, new EvictedOutput(codec), args);
    }

    private static boolean noScript(RedisFuture<?> f) {
        String error = f.getError();
        return error != null && error.startsWith("NOSCRIPT");
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every JDK", e);
        }
    }
}
