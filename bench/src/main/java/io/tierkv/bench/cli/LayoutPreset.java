package io.tierkv.bench.cli;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import java.util.Arrays;
import java.util.Locale;

/**
 * Named KV layouts for {@code tierkv replay}: the model shapes a replay's blocks are sized for.
 * The block size is not part of a preset; it comes from the trace (or {@code --block-tokens}).
 */
public enum LayoutPreset {
    /**
     * 1 layer, 1 KV head, head dim 8, F16: 32 bytes of K+V per token (16 KiB per 512-token block),
     * so a replay runs fast and small on two cores.
     */
    TINY("tiny", 1, 1, 8, DType.F16),
    /** Llama 3 8B: 32 layers, 8 KV heads (GQA), head dim 128, F16: 128 KiB per token. */
    LLAMA3_8B("llama3-8b", 32, 8, 128, DType.F16),
    /** Qwen2.5 7B: 28 layers, 4 KV heads (GQA), head dim 128, BF16: 56 KiB per token. */
    QWEN2_5_7B("qwen2.5-7b", 28, 4, 128, DType.BF16);

    private final String id;
    private final int layers;
    private final int kvHeads;
    private final int headDim;
    private final DType dtype;

    LayoutPreset(String id, int layers, int kvHeads, int headDim, DType dtype) {
        this.id = id;
        this.layers = layers;
        this.kvHeads = kvHeads;
        this.headDim = headDim;
        this.dtype = dtype;
    }

    /**
     * The name used on the command line.
     *
     * @return for example {@code llama3-8b}
     */
    public String id() {
        return id;
    }

    /**
     * The preset's layout at a block size.
     *
     * @param blockSizeTokens B
     * @return the layout
     * @throws IllegalArgumentException as {@link KvLayout#of}
     */
    public KvLayout layout(int blockSizeTokens) {
        return KvLayout.of(layers, kvHeads, headDim, dtype, blockSizeTokens);
    }

    /**
     * The preset's layout with any of its fields replaced.
     *
     * @param blockSizeTokens B
     * @param layersOverride  L, or 0 to keep the preset's
     * @param headsOverride   H, or 0 to keep the preset's
     * @param headDimOverride D, or 0 to keep the preset's
     * @param dtypeOverride   dtype, or null to keep the preset's
     * @return the layout
     * @throws IllegalArgumentException as {@link KvLayout#of}
     */
    public KvLayout layout(int blockSizeTokens, int layersOverride, int headsOverride, int headDimOverride,
            DType dtypeOverride) {
        return KvLayout.of(layersOverride > 0 ? layersOverride : layers, headsOverride > 0 ? headsOverride : kvHeads,
                headDimOverride > 0 ? headDimOverride : headDim, dtypeOverride != null ? dtypeOverride : dtype,
                blockSizeTokens);
    }

    /**
     * Finds a preset by its command-line name (case-insensitive).
     *
     * @param name for example {@code tiny}
     * @return the preset
     * @throws IllegalArgumentException naming the valid presets
     */
    public static LayoutPreset byName(String name) {
        for (LayoutPreset p : values()) {
            if (p.id.equalsIgnoreCase(name.trim())) {
                return p;
            }
        }
        throw new IllegalArgumentException("--layout '" + name + "' (expected one of "
                + Arrays.stream(values()).map(LayoutPreset::id).toList() + ")");
    }

    @Override
    public String toString() {
        return id.toLowerCase(Locale.ROOT);
    }
}
