package io.tierkv.bench.cli;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What a replay stores for a trace block, derived from its id alone so that equal ids give equal
 * token ids and equal bytes (and different ids, different ones, with overwhelming probability).
 *
 * <ul>
 *   <li>Token ids: token {@code j} of the block with id {@code h} is
 *       {@code mix(h * 0x9E3779B97F4A7C15 + j + TOKEN_SEED)} reduced to a non-negative 31-bit
 *       int. Prefix matching through {@code Sequence.matchPrefix} therefore hits exactly when the
 *       trace's chain of ids repeats (the block hash chains the token ids, as the trace's ids
 *       chain its blocks).
 *   <li>Payload: byte {@code i} of the (manager) block {@code s} inside trace block {@code h} comes
 *       from the 64-bit word {@code mix(mix(h + PAYLOAD_SEED) + s * 0x100000001B3 + i / 8)}, so a
 *       block read back can be checked byte for byte without remembering what was written.
 * </ul>
 * {@code mix} is the SplitMix64 finaliser (G. Steele, D. Lea, C. Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014). Stateless and thread-safe.
 */
public final class BlockContent {

    private static final long GOLDEN = 0x9E3779B97F4A7C15L;
    private static final long TOKEN_SEED = 0x7A11_CE5E_ED00_0001L;
    private static final long PAYLOAD_SEED = 0x0BAD_5EED_0000_0002L;
    private static final long DECODE_SEED = 0xDEC0_DE00_0000_0003L;
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED;

    private BlockContent() {
    }

    /**
     * SplitMix64's finaliser.
     *
     * @param z any value
     * @return a well mixed value
     */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * Token {@code j} of the trace block with id {@code hashId}.
     *
     * @param hashId the block's id in the trace
     * @param j      token index in the block
     * @return a token id in {@code [0, 2^31)}
     */
    public static int token(long hashId, int j) {
        return (int) (mix(hashId * GOLDEN + j + TOKEN_SEED) >>> 33);
    }

    /**
     * Writes a trace block's token ids.
     *
     * @param hashId the block's id
     * @param dst    destination
     * @param from   first index in {@code dst}
     * @param count  tokens (the trace block size)
     */
    public static void tokens(long hashId, int[] dst, int from, int count) {
        for (int j = 0; j < count; j++) {
            dst[from + j] = token(hashId, j);
        }
    }

    /**
     * Token {@code j} of the answer of request number {@code request}: never part of a trace
     * block, so decode blocks are never shared.
     *
     * @param request the request's number in the replay
     * @param j       answer token index
     * @return a token id in {@code [0, 2^31)}
     */
    public static int decodeToken(long request, int j) {
        return (int) (mix(request * GOLDEN + j + DECODE_SEED) >>> 33);
    }

    /**
     * The payload key of a manager block: trace block id and the manager block's index inside it.
     *
     * @param hashId   the trace block's id
     * @param subBlock manager block index inside the trace block (0 when the sizes are equal)
     * @return the key {@link #fill} and {@link #verify} take
     */
    public static long payloadKey(long hashId, int subBlock) {
        return mix(hashId + PAYLOAD_SEED) + subBlock * 0x100000001B3L;
    }

    /**
     * Fills {@code block} with the payload of {@code key}.
     *
     * @param key   from {@link #payloadKey}
     * @param block the block's bytes (any length)
     */
    public static void fill(long key, MemorySegment block) {
        long n = block.byteSize();
        long words = n >>> 3;
        for (long w = 0; w < words; w++) {
            block.set(WORD, w << 3, mix(key + w));
        }
        if ((n & 7) != 0) {
            long last = mix(key + words);
            for (long i = words << 3; i < n; i++) {
                block.set(ValueLayout.JAVA_BYTE, i, (byte) (last >>> (8 * (i & 7))));
            }
        }
    }

    /**
     * Checks {@code block} against the payload of {@code key}.
     *
     * @param key   from {@link #payloadKey}
     * @param block the bytes read back
     * @return the offset of the first wrong byte, or -1 when every byte is right
     */
    public static long verify(long key, MemorySegment block) {
        long n = block.byteSize();
        long words = n >>> 3;
        for (long w = 0; w < words; w++) {
            long expected = mix(key + w);
            long actual = block.get(WORD, w << 3);
            if (actual != expected) {
                return (w << 3) + (Long.numberOfTrailingZeros(actual ^ expected) >>> 3);
            }
        }
        if ((n & 7) != 0) {
            long last = mix(key + words);
            for (long i = words << 3; i < n; i++) {
                if (block.get(ValueLayout.JAVA_BYTE, i) != (byte) (last >>> (8 * (i & 7)))) {
                    return i;
                }
            }
        }
        return -1;
    }

    /**
     * Synthesizes a trace request's prompt: each of its trace blocks becomes {@code
     * traceBlockTokens} token ids ({@link #tokens}) in {@code buf}, in order. Returns the run of
     * leading blocks {@code seen} held before this request (what an infinite cache would serve),
     * then adds all of the request's blocks to {@code seen}.
     *
     * @param r                the request
     * @param buf              receives {@code blockCount * traceBlockTokens} token ids
     * @param traceBlockTokens tokens per trace block
     * @param seen             trace block ids of earlier requests; updated
     * @return leading blocks seen before
     */
    static int prompt(io.tierkv.bench.trace.TraceRequest r, int[] buf, int traceBlockTokens, java.util.Set<Long> seen) {
        int k = r.blockCount();
        int run = 0;
        boolean leading = true;
        for (int i = 0; i < k; i++) {
            long id = r.blockHash(i);
            tokens(id, buf, i * traceBlockTokens, traceBlockTokens);
            leading = leading && seen.contains(id);
            run += leading ? 1 : 0;
        }
        for (int i = 0; i < k; i++) {
            seen.add(r.blockHash(i));
        }
        return run;
    }
}
