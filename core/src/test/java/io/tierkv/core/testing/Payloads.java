package io.tierkv.core.testing;

import io.tierkv.core.KvLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Deterministic K/V bytes derived from (sequence key, position, layer, K|V), so every read can be
 * checked against what was written.
 */
public final class Payloads {

    private Payloads() {
    }

    /**
     * Fills a token vector with its deterministic pattern.
     *
     * @param dst      at least tokenVectorBytes
     * @param layout   the layout
     * @param seqKey   identifies the content (for example a tenant and prompt)
     * @param position token position
     * @param layer    layer
     * @param kv       0 for K, 1 for V
     */
    public static void fill(MemorySegment dst, KvLayout layout, long seqKey, int position, int layer, int kv) {
        int n = layout.tokenVectorBytes();
        long x = mix(seqKey * 0x9E3779B97F4A7C15L + position * 131L + layer * 7L + kv);
        for (int i = 0; i + 8 <= n; i += 8) {
            dst.set(ValueLayout.JAVA_LONG_UNALIGNED, i, x);
            x = mix(x);
        }
        for (int i = n & ~7; i < n; i++) {
            dst.set(ValueLayout.JAVA_BYTE, i, (byte) x);
            x >>>= 8;
        }
    }

    /**
     * Tells whether a token vector read back equals its pattern.
     *
     * @param actual   a token vector read back
     * @param layout   the layout
     * @param seqKey   content key
     * @param position token position
     * @param layer    layer
     * @param kv       0 for K, 1 for V
     * @return whether it equals the pattern
     */
    public static boolean matches(MemorySegment actual, KvLayout layout, long seqKey, int position, int layer, int kv) {
        MemorySegment expected = MemorySegment.ofArray(new byte[layout.tokenVectorBytes()]);
        fill(expected, layout, seqKey, position, layer, kv);
        return actual.asSlice(0, layout.tokenVectorBytes()).mismatch(expected) == -1;
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
