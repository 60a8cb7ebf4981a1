package io.tierkv.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class KvLayoutTest {

    @Test
    void bytesFollowTheDesignFormula() {
        KvLayout l = KvLayout.of(32, 8, 128, DType.F16, 16); // Llama-3-8B
        assertEquals(8 * 128 * 2, l.tokenVectorBytes());
        assertEquals(32L * 2 * 8 * 128 * 2, l.bytesPerToken());
        assertEquals(16 * 8 * 128 * 2, l.layerBlockBytes());
        assertEquals(32 * 2 * 16 * 8 * 128 * 2, l.bytesPerBlock());
    }

    @Test
    void offsetsAreLayerThenKvThenTokenMajor() {
        KvLayout l = KvLayout.of(2, 2, 4, DType.F32, 16);
        assertEquals(0, l.offsetOf(0, KvLayout.K, 0));
        assertEquals(32, l.offsetOf(0, KvLayout.K, 1));
        assertEquals(16 * 32, l.offsetOf(0, KvLayout.V, 0));
        assertEquals(2 * 16 * 32 + 5 * 32, l.offsetOf(1, KvLayout.K, 5));
        assertEquals(l.bytesPerBlock() - 32, l.offsetOf(1, KvLayout.V, 15));
    }

    @Test
    void badFieldsAreRejectedWithFieldValueAndBound() {
        var e = assertThrows(IllegalArgumentException.class, () -> KvLayout.of(2, 2, 4, DType.F16, 0));
        assertEquals("blockSizeTokens: 0 (expected 1 <= blockSizeTokens <= 65536)", e.getMessage());
        assertEquals("layers: -1 (expected 1 <= layers <= 4096)",
                assertThrows(IllegalArgumentException.class, () -> KvLayout.of(-1, 2, 4, DType.F16, 16)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> KvLayout.of(2, 2, 4, null, 16));
        var big = assertThrows(IllegalArgumentException.class, () -> KvLayout.of(4096, 4096, 65536, DType.F32, 65536));
        assertEquals(true, big.getMessage().startsWith("bytesPerBlock"), big.getMessage());
        assertThrows(IndexOutOfBoundsException.class, () -> KvLayout.of(2, 2, 4, DType.F16, 16).offsetOf(2, 0, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> KvLayout.of(2, 2, 4, DType.F16, 16).offsetOf(0, 2, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> KvLayout.of(2, 2, 4, DType.F16, 16).offsetOf(0, 0, 16));
    }

    @Test
    void fingerprintSeparatesLayouts() {
        assertEquals(KvLayout.of(2, 2, 4, DType.F16, 16).fingerprint(), KvLayout.of(2, 2, 4, DType.F16, 16).fingerprint());
        assertNotEquals(KvLayout.of(2, 2, 4, DType.F16, 16).fingerprint(),
                KvLayout.of(2, 2, 4, DType.BF16, 16).fingerprint());
        assertNotEquals(KvLayout.of(2, 2, 4, DType.F16, 16).fingerprint(),
                KvLayout.of(2, 2, 4, DType.F16, 32).fingerprint());
    }
}
