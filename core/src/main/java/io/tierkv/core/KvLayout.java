package io.tierkv.core;

/**
 * The shape of one KV block: layers L, KV heads H, head dimension D, element type and block size
 * B in tokens. The one descriptor of a block's bytes; every offset is computed here.
 *
 * <pre>
 * block = [layer 0: K | V][layer 1: K | V] ... [layer L-1: K | V]
 * K (or V) of one layer = [token 0][token 1] ... [token B-1]
 * one token             = [head 0: D elements][head 1] ... [head H-1]
 *
 * bytesPerBlock      = L x 2 x B x H x D x sizeof(dtype)       (DESIGN.md, "Terms: layout")
 * offset(l, kv, t)   = (2 l + kv) x layerBlockBytes + t x tokenVectorBytes
 * </pre>
 *
 * <p>So one layer's K (or V) for the whole block is contiguous, which is what a paged attention
 * kernel reads. Instances are immutable and thread-safe; construction validates every field and
 * rejects byte arithmetic that would overflow a {@code long}, or a block over 2^31 - 1 bytes.
 *
 * @param layers          L, transformer layers, in [1, 4096]
 * @param kvHeads         H, key/value heads per layer, in [1, 4096]
 * @param headDim         D, elements per head, in [1, 65536]
 * @param dtype           element type
 * @param blockSizeTokens B, tokens per block, in [1, 65536]
 */
public record KvLayout(int layers, int kvHeads, int headDim, DType dtype, int blockSizeTokens) {

    /** Index of the key half of a layer inside a block. */
    public static final int K = 0;
    /** Index of the value half of a layer inside a block. */
    public static final int V = 1;

    /**
     * Validates the fields.
     *
     * @throws IllegalArgumentException naming the field, its value and the bound, when a field is
     *                                  out of range or the block would exceed 2^31 - 1 bytes
     */
    public KvLayout {
        checkRange("layers", layers, 1, 4096);
        checkRange("kvHeads", kvHeads, 1, 4096);
        checkRange("headDim", headDim, 1, 65536);
        if (dtype == null) {
            throw new IllegalArgumentException("dtype: null (expected one of F16, BF16, F32, FP8_E4M3, INT8)");
        }
        checkRange("blockSizeTokens", blockSizeTokens, 1, 65536);
        long bytes;
        try {
            bytes = Math.multiplyExact(Math.multiplyExact(Math.multiplyExact(Math.multiplyExact(
                    Math.multiplyExact((long) layers, 2L), blockSizeTokens), kvHeads), headDim), dtype.sizeBytes());
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("bytesPerBlock overflows a long for " + describe(layers, kvHeads,
                    headDim, dtype, blockSizeTokens), e);
        }
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("bytesPerBlock: " + bytes + " (expected <= " + Integer.MAX_VALUE
                    + ") for " + describe(layers, kvHeads, headDim, dtype, blockSizeTokens));
        }
    }

    /**
     * Creates a layout.
     *
     * @param layers          L
     * @param kvHeads         H
     * @param headDim         D
     * @param dtype           element type
     * @param blockSizeTokens B
     * @return the validated layout
     * @throws IllegalArgumentException as the canonical constructor
     */
    public static KvLayout of(int layers, int kvHeads, int headDim, DType dtype, int blockSizeTokens) {
        return new KvLayout(layers, kvHeads, headDim, dtype, blockSizeTokens);
    }

    /** {@return bytes of one token's K (or V) in one layer: H x D x sizeof(dtype)} */
    public int tokenVectorBytes() {
        return kvHeads * headDim * dtype.sizeBytes();
    }

    /** {@return bytes of one token's K and V over all layers: L x 2 x H x D x sizeof(dtype)} */
    public long bytesPerToken() {
        return 2L * layers * tokenVectorBytes();
    }

    /** {@return bytes of one layer's K (or V) for a whole block: B x H x D x sizeof(dtype)} */
    public int layerBlockBytes() {
        return blockSizeTokens * tokenVectorBytes();
    }

    /** {@return bytes of one block: L x 2 x B x H x D x sizeof(dtype), at most 2^31 - 1} */
    public int bytesPerBlock() {
        return layers * 2 * layerBlockBytes();
    }

    /**
     * Byte offset, inside a block, of one token's K or V vector for one layer.
     *
     * @param layer  layer index in [0, L)
     * @param kv     {@link #K} or {@link #V}
     * @param offset token offset in the block, in [0, B)
     * @return the offset in bytes from the block's start
     * @throws IndexOutOfBoundsException naming the argument when one is out of range
     */
    public long offsetOf(int layer, int kv, int offset) {
        if (layer < 0 || layer >= layers) {
            throw new IndexOutOfBoundsException("layer: " + layer + " (expected 0 <= layer < " + layers + ")");
        }
        if (kv != K && kv != V) {
            throw new IndexOutOfBoundsException("kv: " + kv + " (expected 0 for K or 1 for V)");
        }
        if (offset < 0 || offset >= blockSizeTokens) {
            throw new IndexOutOfBoundsException("offset: " + offset + " (expected 0 <= offset < "
                    + blockSizeTokens + ")");
        }
        return (long) (2 * layer + kv) * layerBlockBytes() + (long) offset * tokenVectorBytes();
    }

    /**
     * Byte offset, inside a block, of one layer's K or V for all B tokens.
     *
     * @param layer layer index in [0, L)
     * @param kv    {@link #K} or {@link #V}
     * @return the offset in bytes
     * @throws IndexOutOfBoundsException as {@link #offsetOf(int, int, int)}
     */
    public long layerOffset(int layer, int kv) {
        return offsetOf(layer, kv, 0);
    }

    /**
     * A 64-bit fingerprint of the layout, stored in disk records so that a directory written for
     * another layout is refused. Stable across JVMs and versions (FNV-1a 64 over the five fields).
     *
     * @return the fingerprint
     */
    public long fingerprint() {
        long h = 0xcbf29ce484222325L;
        for (long v : new long[] {layers, kvHeads, headDim, dtype.ordinal(), blockSizeTokens}) {
            for (int i = 0; i < 8; i++) {
                h ^= (v >>> (8 * i)) & 0xff;
                h *= 0x100000001b3L;
            }
        }
        return h;
    }

    private static void checkRange(String field, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(field + ": " + value + " (expected " + min + " <= " + field
                    + " <= " + max + ")");
        }
    }

    private static String describe(int layers, int kvHeads, int headDim, DType dtype, int blockSizeTokens) {
        return "layers=" + layers + ", kvHeads=" + kvHeads + ", headDim=" + headDim + ", dtype=" + dtype
                + ", blockSizeTokens=" + blockSizeTokens;
    }
}
