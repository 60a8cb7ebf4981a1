package io.tierkv.core.testing;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.CacheOptions;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.pool.SlabMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** Small single-tier caches and a writer that fills positions with {@link Payloads}. */
public final class TestCaches {

    private TestCaches() {
    }

    /**
     * A small F32 layout for tests.
     *
     * @param blockSizeTokens B
     * @return 2 layers, 2 KV heads, head dim 4, F32: 32 bytes per token vector
     */
    public static KvLayout smallLayout(int blockSizeTokens) {
        return KvLayout.of(2, 2, 4, DType.F32, blockSizeTokens);
    }

    /**
     * A tracked single-tier cache over slab memory.
     *
     * @param invariants the test's invariant extension
     * @param options    cache options
     * @return the cache; it and its memory are closed after the test
     */
    public static PagedKvCache singleTier(CacheInvariants invariants, CacheOptions options) {
        SlabMemory memory = invariants.track(new SlabMemory(options.deviceBlocks(),
                options.layout().bytesPerBlock()), java.util.List::of);
        return invariants.track(new PagedKvCache(options, memory, null));
    }

    /**
     * Appends tokens and writes every layer's K and V for each with the payload of
     * {@code (contentKey, position, layer, kv)}.
     *
     * @param seq        the sequence
     * @param contentKey payload key
     * @param tokens     token ids to append
     */
    public static void appendWritten(Sequence seq, long contentKey, int... tokens) {
        for (int t : tokens) {
            writeAll(seq, contentKey, seq.appendToken(t));
        }
    }

    /**
     * Writes every layer's K and V of one appended position with the payload of
     * {@code (contentKey, position, layer, kv)}, as {@link #appendWritten} does.
     *
     * @param seq        the sequence
     * @param contentKey payload key
     * @param position   an appended position whose block is not sealed
     */
    public static void writeAll(Sequence seq, long contentKey, int position) {
        KvLayout layout = layoutOf(seq);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment k = arena.allocate(layout.tokenVectorBytes());
            MemorySegment v = arena.allocate(layout.tokenVectorBytes());
            for (int l = 0; l < layout.layers(); l++) {
                Payloads.fill(k, layout, contentKey, position, l, 0);
                Payloads.fill(v, layout, contentKey, position, l, 1);
                seq.write(l, position, k, v);
            }
        }
    }

    /**
     * Fills a whole block image, in the layout's order {@code [layer][K|V][token][head][dim]}, with
     * the payloads {@link #appendWritten} writes for the block's positions.
     *
     * @param dst           at least bytesPerBlock
     * @param layout        the layout
     * @param contentKey    payload key
     * @param firstPosition the block's first position in its sequence (a multiple of B)
     * @return {@code dst}
     */
    public static MemorySegment blockImage(MemorySegment dst, KvLayout layout, long contentKey, int firstPosition) {
        int n = layout.tokenVectorBytes();
        for (int l = 0; l < layout.layers(); l++) {
            for (int kv = 0; kv < 2; kv++) {
                for (int t = 0; t < layout.blockSizeTokens(); t++) {
                    Payloads.fill(dst.asSlice(layout.offsetOf(l, kv, t), n), layout, contentKey, firstPosition + t, l, kv);
                }
            }
        }
        return dst;
    }

    /**
     * Checks that every position of a sequence reads back its payload.
     *
     * @param seq        the sequence
     * @param contentKey payload key
     * @param from       first position
     * @param to         end position (exclusive)
     * @return the first position that does not match, or -1
     */
    public static int firstMismatch(Sequence seq, long contentKey, int from, int to) {
        KvLayout layout = layoutOf(seq);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment k = arena.allocate(layout.tokenVectorBytes());
            MemorySegment v = arena.allocate(layout.tokenVectorBytes());
            for (int p = from; p < to; p++) {
                for (int l = 0; l < layout.layers(); l++) {
                    seq.read(l, p, k, v);
                    if (!Payloads.matches(k, layout, contentKey, p, l, 0) || !Payloads.matches(v, layout, contentKey, p, l, 1)) {
                        return p;
                    }
                }
            }
        }
        return -1;
    }

    private static KvLayout layoutOf(Sequence seq) {
        return seq.layout();
    }

    /**
     * Consecutive token ids.
     *
     * @param from first token id
     * @param n    count
     * @return {@code from, from + 1, ..., from + n - 1}
     */
    public static int[] tokens(int from, int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = from + i;
        }
        return t;
    }
}
