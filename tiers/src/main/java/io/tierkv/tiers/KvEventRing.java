package io.tierkv.tiers;

import io.tierkv.core.event.KvMedium;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.tiers.events.KvEventView;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The KV event queue's storage: a bounded many-producer, one-consumer ring of events held in
 * primitive arrays, so that reporting an event allocates nothing and takes no lock.
 *
 * <p>Design (D. Vyukov's bounded MPMC queue, with one consumer): producers claim the next
 * position {@code t} by a compare-and-set on the tail, after checking that it is less than
 * {@code capacity} ahead of the head (else the event is refused: the caller counts a drop); write
 * the event into slot {@code t mod slots}; and publish it by storing {@code t + 1} in the slot's
 * sequence word with release semantics. The consumer reads position {@code h} once the slot's
 * sequence word is {@code h + 1} (acquire), and frees the positions it has read by moving the head
 * on ({@link #release}), after which producers may overwrite them. A producer stalled between claim
 * and publish holds the consumer at its position until it publishes; later positions wait.
 *
 * <p>A slot holds 5 longs (hash, parent hash, and the type, medium and token count) and B ints
 * (the token ids). There are {@code slots} of them, the capacity C rounded up to a power of two,
 * so that a position's slot is a mask, not a division (the consumer resolves eight fields per
 * event); at most C positions are ever claimed and unreleased, so the extra slots change only
 * which slot a position lands in. The slots are held in chunks (of {@value #CHUNK_EVENTS} slots,
 * fewer for blocks of over 256 tokens, so that no array holds more than 2^18 token ids), all
 * allocated when the ring is made, so a ring costs {@code slots * (48 + 4 * B)} bytes of heap
 * ({@link #maxHeapBytes}, which the builder checks against the heap first). Allocated up front
 * rather than as the ring first fills them: a chunk found missing on the data path is a branch
 * the JIT sees taken only during a manager's first lap, so it compiled it as a trap, and every
 * manager built later in the same JVM deoptimized the event code of every tier (measured with
 * {@code -Xlog:deoptimization=debug} over {@code tierkv replay --observe-ab}, 2026-12-03).
 */
final class KvEventRing {

    /** Most slots per chunk. */
    static final int CHUNK_EVENTS = 1024;
    /** Most token ids per chunk (1 MiB), so large blocks get smaller chunks. */
    private static final int CHUNK_TOKENS = 1 << 18;
    private static final int WORDS = 5;
    private static final int HASH_HI = 0;
    private static final int HASH_LO = 1;
    private static final int PARENT_HI = 2;
    private static final int PARENT_LO = 3;
    private static final int META = 4;
    private static final KvEventView.Type[] TYPES = KvEventView.Type.values();
    private static final KvMedium[] MEDIA = KvMedium.values();
    private static final VarHandle PUBLISHED = MethodHandles.arrayElementVarHandle(long[].class);
    private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** {@link #stored} and {@link #removed}: the event was added. */
    static final int ADDED = 0;
    /** {@link #stored} and {@link #removed}: the event was added and made the ring half full. */
    static final int ADDED_HALF_FULL = 1;
    /** {@link #stored} and {@link #removed}: nothing was added (the ring is full, or too many tokens). */
    static final int REFUSED = -1;

    private final int capacity;
    /** {@code capacity / 2}: the depth at which {@link #ADDED_HALF_FULL} is returned. */
    private final int halfCapacity;
    /** {@code slots - 1}, slots being capacity rounded up to a power of two. */
    private final int slotMask;
    private final int maxTokens;
    /** log2 of the slots per chunk. */
    private final int chunkShift;
    private final int chunkMask;
    /** Every chunk, made with the ring. */
    private final Chunk[] chunks;
    /** The next position a producer claims; also the number of events ever accepted. */
    private final AtomicLong tail = new AtomicLong();
    /** The first position not yet released by the consumer. */
    private final AtomicLong head = new AtomicLong();

    /** One chunk of slots. */
    private static final class Chunk {
        final long[] words;
        final int[] tokens;
        /** Per slot: the position it holds plus 1, once published. */
        final long[] published;

        Chunk(int events, int maxTokens) {
            words = new long[events * WORDS];
            tokens = new int[events * maxTokens];
            published = new long[events];
        }
    }

    /**
     * Creates an empty ring.
     *
     * @param capacity  most events held, >= 1
     * @param maxTokens token ids a slot holds, B, >= 1
     */
    KvEventRing(int capacity, int maxTokens) {
        this.capacity = capacity;
        this.halfCapacity = capacity / 2;
        this.slotMask = (int) (slots(capacity) - 1);
        this.maxTokens = maxTokens;
        int perChunk = Math.max(1, Math.min(CHUNK_EVENTS, CHUNK_TOKENS / maxTokens));
        this.chunkShift = 31 - Integer.numberOfLeadingZeros(perChunk);
        this.chunkMask = (1 << chunkShift) - 1;
        this.chunks = new Chunk[(int) ((slotMask + 1L + chunkMask) >>> chunkShift)];
        for (int ci = 0; ci < chunks.length; ci++) {
            chunks[ci] = new Chunk(Math.min(chunkMask + 1, slotMask + 1 - (ci << chunkShift)), maxTokens);
        }
    }

    /** {@return capacity rounded up to a power of two: the slot count, at most 2^31} */
    private static long slots(int capacity) {
        return capacity == 1 ? 1 : Long.highestOneBit(capacity - 1L) << 1;
    }

    /**
     * {@return the most heap bytes a ring takes once every slot has been used: per slot 5 longs,
     * a sequence word and B ints, for capacity rounded up to a power of two slots}
     *
     * @param capacity  events, >= 1
     * @param maxTokens B, >= 1
     */
    static long maxHeapBytes(int capacity, int maxTokens) {
        return slots(capacity) * (WORDS * Long.BYTES + Long.BYTES + (long) Integer.BYTES * maxTokens);
    }

    /** {@return the capacity in events} */
    int capacity() {
        return capacity;
    }

    /** {@return events accepted so far; any thread} */
    long accepted() {
        return tail.get();
    }

    /** {@return events accepted and not yet released; any thread} */
    int depth() {
        return (int) Math.max(0, tail.get() - head.get());
    }

    /**
     * Adds a {@code BlockStored}; producer side.
     *
     * @param medium   the tier
     * @param hi       the block hash's high bits
     * @param lo       the block hash's low bits
     * @param identity the block's identity ({@link BlockIdentity}: key, then token ids)
     * @return {@link #ADDED}, {@link #ADDED_HALF_FULL}, or {@link #REFUSED} if the ring is full or
     *         the identity holds more than B tokens (nothing added)
     */
    int stored(KvMedium medium, long hi, long lo, MemorySegment identity) {
        long tokens = (identity.byteSize() - BlockIdentity.KEY_BYTES) / Integer.BYTES;
        return tokens <= maxTokens ? add(KvEventView.Type.BLOCK_STORED, medium, hi, lo, identity, (int) tokens) : REFUSED;
    }

    /**
     * Adds a {@code BlockRemoved}; producer side.
     *
     * @param medium the tier
     * @param hi     the block hash's high bits
     * @param lo     the block hash's low bits
     * @return {@link #ADDED}, {@link #ADDED_HALF_FULL}, or {@link #REFUSED} if the ring is full
     *         (nothing added)
     */
    int removed(KvMedium medium, long hi, long lo) {
        return add(KvEventView.Type.BLOCK_REMOVED, medium, hi, lo, null, 0);
    }

    /** Claims a position, writes the event into its slot and publishes it; what {@link #stored} returns. */
    private int add(KvEventView.Type type, KvMedium medium, long hi, long lo, MemorySegment identity, int tokens) {
        long t;
        long h;
        do {
            t = tail.get();
            h = head.getAcquire();
            if (t - h >= capacity) {
                return REFUSED;
            }
        } while (!tail.compareAndSet(t, t + 1));
        int slot = (int) t & slotMask;
        Chunk c = chunks[slot >>> chunkShift];
        int k = slot & chunkMask;
        int w = k * WORDS;
        c.words[w + HASH_HI] = hi;
        c.words[w + HASH_LO] = lo;
        c.words[w + PARENT_HI] = identity == null ? 0 : identity.get(LONG_LE, BlockIdentity.PARENT_HI);
        c.words[w + PARENT_LO] = identity == null ? 0 : identity.get(LONG_LE, BlockIdentity.PARENT_LO);
        c.words[w + META] = type.ordinal() | (long) medium.ordinal() << 8 | (long) tokens << 16;
        if (tokens > 0) {
            MemorySegment.copy(identity, ValueLayout.JAVA_INT_UNALIGNED, BlockIdentity.KEY_BYTES, c.tokens,
                    k * maxTokens, tokens);
        }
        PUBLISHED.setRelease(c.published, k, t + 1);
        // Seen by each claimer, the depth t - h grows by at most one per claim (h only moves on), so a
        // fill reports half full at most once (none, if the claimer at the crossing read a newer head).
        return t - h == halfCapacity ? ADDED_HALF_FULL : ADDED;
    }

    /** {@return the first position not yet released; consumer side} */
    long head() {
        return head.get();
    }

    /**
     * Counts the published positions from {@code from} on, stopping at the first unpublished one;
     * consumer side.
     *
     * @param from the first position, the head or after it
     * @param max  most positions counted
     * @return how many of positions {@code from, from + 1, ...} can be read, {@code <= max}
     */
    int ready(long from, int max) {
        long available = tail.get() - from;
        int n = 0;
        while (n < max && n < available) {
            long t = from + n;
            int slot = (int) t & slotMask;
            Chunk c = chunks[slot >>> chunkShift];
            if ((long) PUBLISHED.getAcquire(c.published, slot & chunkMask) != t + 1) {
                break;
            }
            n++;
        }
        return n;
    }

    /**
     * Frees every position before {@code upTo} for the producers; consumer side.
     *
     * @param upTo the new head, {@code head() <= upTo <=} the last ready position plus 1
     */
    void release(long upTo) {
        head.setRelease(upTo);
    }

    private Chunk chunk(long t) {
        return chunks[((int) t & slotMask) >>> chunkShift];
    }

    private int index(long t) {
        return (int) t & slotMask & chunkMask;
    }

    private long word(long t, int field) {
        return chunk(t).words[index(t) * WORDS + field];
    }

    /** {@return position t's kind; t ready} */
    KvEventView.Type type(long t) {
        return TYPES[(int) (word(t, META) & 0xFF)];
    }

    /** {@return position t's medium; t ready} */
    KvMedium medium(long t) {
        return MEDIA[(int) (word(t, META) >>> 8 & 0xFF)];
    }

    /** {@return position t's token count; t ready} */
    int tokenCount(long t) {
        return (int) (word(t, META) >>> 16);
    }

    /** {@return position t's hash, high bits; t ready} */
    long hashHi(long t) {
        return word(t, HASH_HI);
    }

    /** {@return position t's hash, low bits; t ready} */
    long hashLo(long t) {
        return word(t, HASH_LO);
    }

    /** {@return position t's parent hash, high bits (0 for none); t ready} */
    long parentHi(long t) {
        return word(t, PARENT_HI);
    }

    /** {@return position t's parent hash, low bits (0 for none); t ready} */
    long parentLo(long t) {
        return word(t, PARENT_LO);
    }

    /**
     * Copies position t's token ids.
     *
     * @param t      a ready position
     * @param dst    where to copy
     * @param offset the first index written
     * @return the ids copied, {@code tokenCount(t)}
     * @throws IndexOutOfBoundsException if dst has no room
     */
    int copyTokens(long t, int[] dst, int offset) {
        int n = tokenCount(t);
        System.arraycopy(chunk(t).tokens, index(t) * maxTokens, dst, offset, n);
        return n;
    }

    /**
     * {@return token j of position t}
     *
     * @param t a ready position
     * @param j the token, {@code 0 <= j < tokenCount(t)}
     * @throws IndexOutOfBoundsException if j is out of range
     */
    int token(long t, int j) {
        int n = tokenCount(t);
        if (j < 0 || j >= n) {
            throw new IndexOutOfBoundsException("token " + j + " (the event has " + n + ")");
        }
        return chunk(t).tokens[index(t) * maxTokens + j];
    }
}
