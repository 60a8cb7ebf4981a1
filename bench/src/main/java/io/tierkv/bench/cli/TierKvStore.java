package io.tierkv.bench.cli;

import io.tierkv.bench.model.KvBlockVisitor;
import io.tierkv.bench.model.KvStore;
import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.Sequence;
import io.tierkv.tiers.BlockStream;
import io.tierkv.tiers.KvBlockManager;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A {@link KvStore} whose K and V live only in TierKV: one {@link Sequence} of a
 * {@link KvBlockManager} with an F32 layout of the model's shape (layers, KV heads, head size).
 *
 * <p>Each position is first appended with its token id ({@link #append}), which is what the
 * manager hashes for prefix sharing; the forward pass then writes its K and V per layer through
 * {@link Sequence#write(int, int, float[], float[])}. Attention reads blocks one at a time, never
 * all at once, so a device budget of a few blocks suffices for any length:
 * <ul>
 *   <li>{@link Read#STREAM}: {@link KvBlockManager#stream}, which leases each block in turn
 *       (promoting it from host or disk if it was demoted) and asks the movers to promote the next
 *       {@code readAhead} blocks in the background;
 *   <li>{@link Read#LEASE}: {@link Sequence#lease} of one block at a time; each visit reads the
 *       block's layer through {@link KvLayout#layerOffset}.
 * </ul>
 * Thread-safety: one thread at a time, as the sequence.
 */
public final class TierKvStore implements KvStore, AutoCloseable {

    /** How attention reads the blocks. */
    public enum Read {
        /** {@link KvBlockManager#stream}: lease in order with read-ahead promotions. */
        STREAM,
        /** {@link Sequence#lease} one block at a time. */
        LEASE
    }

    private final KvBlockManager kv;
    private final Sequence seq;
    private final KvLayout layout;
    private final int capacity;
    private final Read read;
    private final int readAhead;

    /**
     * Wraps a sequence.
     *
     * @param kv        the manager that owns the sequence
     * @param seq       the sequence (this store closes it)
     * @param capacity  positions the store may hold
     * @param read      how attention reads blocks
     * @param readAhead blocks promoted ahead of the stream (STREAM only), {@code >= 0}
     * @throws IllegalArgumentException when the layout's dtype is not F32 or an argument is out of range
     */
    public TierKvStore(KvBlockManager kv, Sequence seq, int capacity, Read read, int readAhead) {
        this.kv = Objects.requireNonNull(kv, "kv");
        this.seq = Objects.requireNonNull(seq, "seq");
        this.layout = seq.layout();
        if (layout.dtype() != DType.F32) {
            throw new IllegalArgumentException("layout.dtype: " + layout.dtype() + " (expected F32)");
        }
        if (capacity < 1 || readAhead < 0) {
            throw new IllegalArgumentException("capacity, readAhead: " + capacity + ", " + readAhead
                    + " (expected >= 1, >= 0)");
        }
        this.capacity = capacity;
        this.read = Objects.requireNonNull(read, "read");
        this.readAhead = readAhead;
    }

    /**
     * Appends the next position with its token id; call before the forward pass of that token.
     *
     * @param token the token id
     * @return the position
     * @throws IllegalStateException when the store is full
     */
    public int append(int token) {
        if (seq.length() >= capacity) {
            throw new IllegalStateException("position " + seq.length() + ": store full (capacity " + capacity + ")");
        }
        return seq.appendToken(token);
    }

    /**
     * The underlying sequence.
     *
     * @return the sequence
     */
    public Sequence sequence() {
        return seq;
    }

    /**
     * Forks: a new store over {@link Sequence#fork()}, sharing every block (copy-on-write).
     *
     * @return the child store; close it
     */
    public TierKvStore fork() {
        return new TierKvStore(kv, seq.fork(), capacity, read, readAhead);
    }

    @Override
    public int layers() {
        return layout.layers();
    }

    @Override
    public int kvDim() {
        return layout.kvHeads() * layout.headDim();
    }

    @Override
    public int capacity() {
        return capacity;
    }

    /**
     * {@inheritDoc} The position must have been {@linkplain #append appended}.
     */
    @Override
    public void write(int layer, int position, float[] k, float[] v) {
        seq.write(layer, position, k, v);
    }

    @Override
    public void read(int layer, int length, KvBlockVisitor visitor) {
        if (length < 1 || length > seq.length()) {
            throw new IndexOutOfBoundsException("length: " + length + " (expected 1 <= length <= " + seq.length() + ")");
        }
        int b = layout.blockSizeTokens();
        long kOff = layout.layerOffset(layer, KvLayout.K);
        long vOff = layout.layerOffset(layer, KvLayout.V);
        if (read == Read.STREAM) {
            try (BlockStream s = kv.stream(seq, layer, readAhead)) {
                while (s.hasNext()) {
                    int first = s.next() * b;
                    if (first >= length) {
                        break;
                    }
                    MemorySegment block = s.block();
                    visitor.visit(first, Math.min(b, length - first), block, kOff, block, vOff);
                }
            }
            return;
        }
        for (int first = 0; first < length; first += b) {
            int n = Math.min(b, length - first);
            try (BlockLease lease = seq.lease(first, first + n)) {
                MemorySegment block = lease.block(0);
                visitor.visit(first, n, block, kOff, block, vOff);
            }
        }
    }

    /** Closes the sequence: its sealed blocks stay cached in the manager. */
    @Override
    public void close() {
        seq.close();
    }
}
