package io.tierkv.bench.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Both stores return exactly what was written, in runs that cover [0, length) once, in order. */
class KvStoreTest {

    private static final int LAYERS = 3;
    private static final int KV_HEADS = 2;
    private static final int HEAD_DIM = 4;
    private static final int KV_DIM = KV_HEADS * HEAD_DIM;
    private static final int CAPACITY = 23;

    /** k = +value, v = -value of (layer, position, index), all distinct. */
    private static float value(int layer, int position, int index) {
        return 1 + layer * 10_000 + position * 100 + index;
    }

    private static void fill(KvStore kv) {
        float[] k = new float[KV_DIM];
        float[] v = new float[KV_DIM];
        for (int p = 0; p < CAPACITY; p++) {
            for (int l = 0; l < LAYERS; l++) {
                for (int i = 0; i < KV_DIM; i++) {
                    k[i] = value(l, p, i);
                    v[i] = -value(l, p, i);
                }
                kv.write(l, p, k, v);
            }
        }
    }

    /** Reads every (layer, length), checking run boundaries and every float. */
    private static void checkReads(KvStore kv, int runTokens) {
        for (int l = 0; l < LAYERS; l++) {
            for (int length = 1; length <= CAPACITY; length++) {
                int layer = l;
                List<int[]> runs = new ArrayList<>();
                kv.read(layer, length, (first, tokens, keys, ko, values, vo) -> {
                    runs.add(new int[] {first, tokens});
                    for (int t = 0; t < tokens; t++) {
                        for (int i = 0; i < KV_DIM; i++) {
                            long off = (long) (t * KV_DIM + i) * Float.BYTES;
                            assertEquals(value(layer, first + t, i), keys.get(ValueLayout.JAVA_FLOAT, ko + off));
                            assertEquals(-value(layer, first + t, i), values.get(ValueLayout.JAVA_FLOAT, vo + off));
                        }
                    }
                });
                int next = 0;
                for (int[] run : runs) {
                    assertEquals(next, run[0]);
                    assertEquals(Math.min(runTokens, length - next), run[1]);
                    next += run[1];
                }
                assertEquals(length, next);
            }
        }
    }

    /** The array store serves the whole range as one run. */
    @Test
    void arrayStoreReadsOneRun() {
        ArrayKvStore kv = new ArrayKvStore(LAYERS, KV_DIM, CAPACITY);
        fill(kv);
        checkReads(kv, CAPACITY);
    }

    /**
     * The paged store serves one run per block, straight from the block in the KvLayout offsets.
     *
     * @param blockSize tokens per block
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 5, 16, 23, 64})
    void pagedStoreReadsOneRunPerBlockInTheTierKvLayout(int blockSize) {
        KvLayout layout = KvLayout.of(LAYERS, KV_HEADS, HEAD_DIM, DType.F32, blockSize);
        try (Arena arena = Arena.ofConfined()) {
            PagedKvStore kv = new PagedKvStore(layout, CAPACITY, arena);
            fill(kv);
            checkReads(kv, blockSize);
            // The run's memory is the block itself: layer l's K at layerOffset(l, K), V at layerOffset(l, V).
            kv.read(2, CAPACITY, (first, tokens, keys, ko, values, vo) -> {
                assertSame(keys, values);
                assertEquals(layout.bytesPerBlock(), keys.byteSize());
                assertEquals(layout.layerOffset(2, KvLayout.K), ko);
                assertEquals(layout.layerOffset(2, KvLayout.V), vo);
                assertEquals(value(2, first, 0), keys.get(ValueLayout.JAVA_FLOAT, layout.offsetOf(2, KvLayout.K, 0)));
            });
        }
    }

    /** Out-of-range arguments, unwritten blocks and non-F32 layouts are rejected. */
    @Test
    void rejectsWhatItCannotServe() {
        SplittableRandom r = new SplittableRandom(1);
        float[] vec = new float[KV_DIM];
        vec[0] = (float) r.nextDouble();
        try (Arena arena = Arena.ofConfined()) {
            PagedKvStore paged = new PagedKvStore(KvLayout.of(LAYERS, KV_HEADS, HEAD_DIM, DType.F32, 4), 10, arena);
            paged.write(0, 0, vec, vec);
            assertThrows(IllegalStateException.class, () -> paged.read(0, 5, (f, t, k, ko, v, vo) -> { }));
            assertThrows(IndexOutOfBoundsException.class, () -> paged.read(0, 11, (f, t, k, ko, v, vo) -> { }));
            assertThrows(IndexOutOfBoundsException.class, () -> paged.read(0, 0, (f, t, k, ko, v, vo) -> { }));
            assertThrows(IndexOutOfBoundsException.class, () -> paged.write(0, 10, vec, vec));
            assertThrows(IndexOutOfBoundsException.class, () -> paged.write(LAYERS, 0, vec, vec));
            assertThrows(IndexOutOfBoundsException.class, () -> paged.write(0, 1, new float[KV_DIM - 1], vec));
            assertThrows(IllegalArgumentException.class,
                    () -> new PagedKvStore(KvLayout.of(1, 1, 2, DType.F16, 4), 10, arena));
        }
        ArrayKvStore array = new ArrayKvStore(LAYERS, KV_DIM, 10);
        assertThrows(IndexOutOfBoundsException.class, () -> array.write(0, 10, vec, vec));
        assertThrows(IndexOutOfBoundsException.class, () -> array.read(0, 11, (f, t, k, ko, v, vo) -> { }));
        assertThrows(IllegalArgumentException.class, () -> new ArrayKvStore(LAYERS, KV_DIM, 0));
    }
}
