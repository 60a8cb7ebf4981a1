package io.tierkv.bench.cli;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.Sequence;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;

/**
 * The soak's documents: token {@code i} of document {@code d}, and every word of K and V written
 * for it, depend only on {@code (d, i)} (SplitMix64's finalizer of the pair), so any block read
 * back, from any tier or from a recovered disk record, must hold exactly its document's bytes.
 * Writes a document's tokens into a sequence and verifies positions read back, counting every
 * difference in the {@link SoakTally}.
 *
 * <p>Thread-safety: one instance per worker (its scratch vectors are the worker's, allocated in
 * its confined arena); the static functions are pure.
 */
final class SoakDocument {

    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;
    /** Most blocks one verifying lease covers (each is promoted to the device while leased). */
    static final int LEASE_CHUNK_BLOCKS = 4;

    private final KvLayout layout;
    private final SoakTally tally;
    private final MemorySegment k;
    private final MemorySegment v;

    /**
     * Creates the writer and checker of one worker.
     *
     * @param layout the layout
     * @param tally  counts mismatches and verified bytes
     * @param k      scratch K vector, {@code layout.tokenVectorBytes()} bytes, 8-aligned
     * @param v      scratch V vector, the same size
     */
    SoakDocument(KvLayout layout, SoakTally tally, MemorySegment k, MemorySegment v) {
        this.layout = layout;
        this.tally = tally;
        this.k = k;
        this.v = v;
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * Token {@code pos} of document {@code doc}.
     *
     * @param doc the document
     * @param pos the position
     * @return the token id, {@code >= 0}
     */
    static int token(int doc, int pos) {
        return (int) (mix(doc * GOLDEN + pos + 0x50A4_0000_0001L) >>> 33);
    }

    /** Word {@code w} of the K ({@code kv} 0) or V (1) vector of layer {@code layer} at {@code pos} of {@code doc}. */
    private static long word(int doc, int pos, int layer, int kv, int w) {
        return mix(mix(doc + 0x50A4_0000_0002L) + (((long) pos * 64 + layer) * 2 + kv) * 0x100000001B3L + w);
    }

    /**
     * Appends the document's next {@code n} tokens and writes every layer's K and V for each.
     *
     * @param s   the sequence, holding a prefix of the document
     * @param doc the document
     * @param n   tokens to append, {@code >= 0}
     */
    void extend(Sequence s, int doc, int n) {
        int words = layout.tokenVectorBytes() / 8;
        for (int i = 0; i < n; i++) {
            int pos = s.appendToken(token(doc, s.length()));
            for (int layer = 0; layer < layout.layers(); layer++) {
                for (int w = 0; w < words; w++) {
                    k.setAtIndex(WORD, w, word(doc, pos, layer, 0, w));
                    v.setAtIndex(WORD, w, word(doc, pos, layer, 1, w));
                }
                s.write(layer, pos, k, v);
            }
        }
    }

    /**
     * Verifies token ids and every byte of positions {@code [from, to)} through leases of at most
     * {@value #LEASE_CHUNK_BLOCKS} blocks; each difference is counted (the first word that differs
     * per layer, K and V).
     *
     * @param s    the sequence
     * @param doc  its document
     * @param from the first position
     * @param to   the end, exclusive, {@code <= s.length()}
     */
    void verify(Sequence s, int doc, int from, int to) {
        int b = layout.blockSizeTokens();
        int words = layout.tokenVectorBytes() / 8;
        int pos = from;
        while (pos < to) {
            int chunkEnd = Math.min(to, (pos / b + LEASE_CHUNK_BLOCKS) * b);
            try (BlockLease lease = s.lease(pos, chunkEnd)) {
                for (; pos < chunkEnd; pos++) {
                    if (s.tokenAt(pos) != token(doc, pos)) {
                        tally.mismatch("doc " + doc + " position " + pos + ": token id " + s.tokenAt(pos)
                                + ", expected " + token(doc, pos));
                    }
                    MemorySegment blk = lease.block(pos / b - lease.firstBlockIndex());
                    int offset = pos % b;
                    for (int layer = 0; layer < layout.layers(); layer++) {
                        for (int kvIndex = 0; kvIndex < 2; kvIndex++) {
                            long base = layout.offsetOf(layer, kvIndex == 0 ? KvLayout.K : KvLayout.V, offset);
                            for (int w = 0; w < words; w++) {
                                long got = blk.get(WORD, base + 8L * w);
                                long want = word(doc, pos, layer, kvIndex, w);
                                if (got != want) {
                                    tally.mismatch(String.format(Locale.ROOT, "doc %d position %d layer %d %s word "
                                            + "%d: %016x, expected %016x (block id %d)", doc, pos, layer,
                                            kvIndex == 0 ? "K" : "V", w, got, want,
                                            lease.blockId(pos / b - lease.firstBlockIndex())));
                                    break;
                                }
                            }
                        }
                    }
                    tally.verifiedBytes.add(2L * layout.layers() * layout.tokenVectorBytes());
                }
            }
        }
    }
}
