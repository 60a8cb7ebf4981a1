package com.github.tjake.jlama.tensor;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.Sequence;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;
import java.util.UUID;

/**
 * One Jlama session's KV buffer kept in a TierKV {@link Sequence}: every (layer, position) tensor
 * Jlama asks for is a zero-copy {@link FloatBufferTensor} over the block that holds the position,
 * on the device tier, in the layout {@code [layer][K|V][token][head][dim]} (one layer's K of a
 * block is a {@code [B, kvHeads x headDim]} tensor, which is the page shape Jlama's attention
 * loops over).
 *
 * <p>Lifecycle of one forward step (driven by {@code io.tierkv.jlama.JlamaSession}): the driver
 * appends the step's tokens to the sequence, calls {@link #attend(int)} (a lease over every block
 * up to the step's last position: they are promoted to the device if they were demoted, and
 * pinned there), runs Jlama's {@code batchForward} or {@code forward}, which writes the new
 * positions' K and V into the views and reads all earlier ones in place, then calls
 * {@link #written(int, int)} and {@link #release()}. {@code written} tells TierKV each position
 * is complete through {@link Sequence#write(int, int, MemorySegment, MemorySegment)} with the
 * block's own bytes as the source (a same-address copy of {@code 2 x kvHeads x headDim} floats
 * per layer: the public API counts a position written only through {@code write}); full blocks
 * then seal, get their chained hash and become shareable, demotable and reusable by any session.
 *
 * <p>Jlama's page machinery of the superclass is never used: every accessor is overridden and
 * the superclass allocates no page. Not thread-safe: one Jlama thread drives a session at a time,
 * as Jlama does.
 */
public final class TierKvBuffer extends KvBufferCache.KvBuffer {

    /** Large enough that the superclass's page-size arithmetic accepts it; no page is allocated. */
    private static final int UNUSED_PAGE_BYTES = Integer.MAX_VALUE - 8;

    private final Sequence sequence;
    private final KvLayout layout;
    private final int blockTokens;
    private final int kvFloats;
    private BlockLease lease;
    /** Views of the leased blocks, {@code [2 x layer + kv][block]}, made on first use per lease. */
    private AbstractTensor<?, ?>[][] views;
    private boolean closed;

    /**
     * Creates the buffer of one session.
     *
     * @param cache    the cache that owns it (Jlama's inner-class outer instance)
     * @param session  the session id
     * @param sequence the TierKV sequence that holds the session's KV; owned by the caller
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the sequence's layout is not F32
     */
    public TierKvBuffer(TierKvBufferCache cache, UUID session, Sequence sequence) {
        Objects.requireNonNull(cache, "cache").super(Objects.requireNonNull(session, "session"), UNUSED_PAGE_BYTES, true);
        this.sequence = Objects.requireNonNull(sequence, "sequence");
        this.layout = sequence.layout();
        if (layout.dtype() != io.tierkv.core.DType.F32) {
            throw new IllegalArgumentException("layout.dtype: " + layout.dtype() + " (expected F32, Jlama's working dtype)");
        }
        this.blockTokens = layout.blockSizeTokens();
        this.kvFloats = layout.kvHeads() * layout.headDim();
    }

    /** {@return the TierKV sequence that holds this session's KV} */
    public Sequence sequence() {
        return sequence;
    }

    /**
     * Leases every block covering positions {@code [0, toToken)} (promoting those below the
     * device) for the next forward step; releases the previous lease first.
     *
     * @param toToken end position (exclusive), {@code 1 <= toToken <= sequence().length()}
     * @throws IndexOutOfBoundsException as {@link Sequence#lease(int, int)}
     * @throws IllegalStateException     if the buffer is closed
     */
    public void attend(int toToken) {
        checkOpen();
        release();
        lease = sequence.lease(0, toToken);
        views = new AbstractTensor<?, ?>[2 * layout.layers()][lease.blockCount()];
    }

    /**
     * Marks positions {@code [from, to)} written for every layer (after Jlama wrote them into the
     * views), so that full blocks seal. Needs the lease of {@link #attend(int)} to cover them.
     *
     * @param from first position
     * @param to   end position (exclusive)
     * @throws IllegalStateException if no lease covers the positions
     */
    public void written(int from, int to) {
        int tvb = layout.tokenVectorBytes();
        for (int p = from; p < to; p++) {
            MemorySegment block = block(p / blockTokens);
            int offset = p % blockTokens;
            for (int l = 0; l < layout.layers(); l++) {
                MemorySegment k = block.asSlice(layout.offsetOf(l, KvLayout.K, offset), tvb);
                MemorySegment v = block.asSlice(layout.offsetOf(l, KvLayout.V, offset), tvb);
                sequence.write(l, p, k, v);
            }
        }
    }

    /** Closes the lease of the last {@link #attend(int)}, if any; idempotent. */
    public void release() {
        views = null;
        if (lease != null) {
            BlockLease l = lease;
            lease = null;
            l.close();
        }
    }

    private MemorySegment block(int blockIndex) {
        if (lease == null) {
            throw new IllegalStateException("no lease: Jlama read this session's KV outside a step of "
                    + "io.tierkv.jlama.JlamaSession.generate (Jlama's own generate cannot drive a TierKV session; "
                    + "a session closed meanwhile has no lease either)");
        }
        if (blockIndex >= lease.blockCount()) {
            throw new IllegalStateException("block " + blockIndex + " is beyond the lease (" + lease.blockCount()
                    + " blocks): attend(toToken) must cover every position of the step");
        }
        return lease.block(blockIndex);
    }

    private AbstractTensor<?, ?> view(int layer, int kv, int blockIndex) {
        MemorySegment block = block(blockIndex);
        AbstractTensor<?, ?>[] row = views[2 * layer + kv];
        AbstractTensor<?, ?> t = row[blockIndex];
        if (t == null) {
            MemorySegment slice = block.asSlice(layout.layerOffset(layer, kv), layout.layerBlockBytes());
            t = new FloatBufferTensor(slice.asByteBuffer().order(ByteOrder.nativeOrder()).asFloatBuffer(),
                    TensorShape.of(blockTokens, kvFloats), true);
            row[blockIndex] = t;
        }
        return t;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("KV buffer of session " + sequence + " is closed");
        }
    }

    /**
     * The key tensor of one position, {@code [1, kvHeads x headDim]}, over the block's memory.
     *
     * @param layerIndex layer
     * @param position   position, covered by the current lease
     * @return a view; valid until {@link #release()}
     */
    @Override
    public AbstractTensor<?, ?> getKeyTensorForPosition(int layerIndex, int position) {
        return view(layerIndex, KvLayout.K, position / blockTokens).slice(true, position % blockTokens);
    }

    /**
     * The value tensor of one position, {@code [1, kvHeads x headDim]}, over the block's memory.
     *
     * @param layerIndex layer
     * @param position   position, covered by the current lease
     * @return a view; valid until {@link #release()}
     */
    @Override
    public AbstractTensor<?, ?> getValTensorForPosition(int layerIndex, int position) {
        return view(layerIndex, KvLayout.V, position / blockTokens).slice(true, position % blockTokens);
    }

    /**
     * The key tensors of every block up to the one holding {@code upperBound}, each
     * {@code [B, kvHeads x headDim]} (Jlama reads the last one up to {@code upperBound}).
     *
     * @param layerIndex layer
     * @param upperBound last position attended over
     * @return views; valid until {@link #release()}
     */
    @Override
    public AbstractTensor<?, ?>[] getKeyTensorsUptoPosition(int layerIndex, int upperBound) {
        return upto(layerIndex, KvLayout.K, upperBound);
    }

    /**
     * The value tensors of every block up to the one holding {@code upperBound}, as
     * {@link #getKeyTensorsUptoPosition}.
     *
     * @param layerIndex layer
     * @param upperBound last position attended over
     * @return views; valid until {@link #release()}
     */
    @Override
    public AbstractTensor<?, ?>[] getValTensorsUptoPosition(int layerIndex, int upperBound) {
        return upto(layerIndex, KvLayout.V, upperBound);
    }

    private AbstractTensor<?, ?>[] upto(int layer, int kv, int upperBound) {
        int n = upperBound / blockTokens + 1;
        AbstractTensor<?, ?>[] out = new AbstractTensor<?, ?>[n];
        for (int b = 0; b < n; b++) {
            out[b] = view(layer, kv, b);
        }
        return out;
    }

    /**
     * Releases the lease. The sequence stays open (its owner closes it): Jlama's {@code generate}
     * closes a session's buffer after every call, which must not drop the session's KV.
     */
    @Override
    public void close() {
        release();
    }

    /** Closes for good: releases the lease and refuses further steps (the owner then closes the sequence). */
    public void dispose() {
        release();
        closed = true;
    }

    @Override
    public String toString() {
        return "TierKvBuffer[" + sequence.length() + " tokens" + (lease == null ? "" : ", " + lease.blockCount()
                + " blocks leased") + ", views " + (views == null ? 0 : Arrays.stream(views).mapToLong(r -> Arrays
                .stream(r).filter(Objects::nonNull).count()).sum()) + "]";
    }
}
