package io.tierkv.bench.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Decoding that starts after K/V already present (prefix reuse) equals an independent run: here
 * the oracle, since greedy decoding of its own greedy output continues it.
 */
class PrefixReuseTest {

    /** BOS followed by the first {@code n} oracle ids. */
    private static int[] oraclePrefix(Stories260K s, int n) {
        int[] tokens = new int[n + 1];
        tokens[0] = s.startToken();
        System.arraycopy(s.greedyIds(), 0, tokens, 1, n);
        return tokens;
    }

    /**
     * A second decoder continues over the first one's array store from any position.
     *
     * @param present positions the first decoder runs
     * @throws Exception when the shared data cannot be read
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 20, 40})
    void newDecoderContinuesOverArrayStore(int present) throws Exception {
        Stories260K s = Stories260K.get();
        int[] tokens = oraclePrefix(s, 40);
        ArrayKvStore kv = ArrayKvStore.forModel(s.model().config(), s.steps());
        new Decoder(s.model(), kv).prefill(Arrays.copyOf(tokens, present));
        Decoder resumed = new Decoder(s.model(), kv, present);
        int[] rest = resumed.generate(tokens, s.steps() - 40);
        assertArrayEquals(Arrays.copyOfRange(s.greedyIds(), 40, s.steps()), rest);
    }

    /**
     * Three forks and the parent decode concurrently after a shared prompt; fork points on a block
     * boundary (all blocks shared) and inside a block (tail copied).
     *
     * @param forkAt positions shared by all sequences
     * @throws Exception when the shared data cannot be read, or a sequence fails
     */
    @ParameterizedTest
    @ValueSource(ints = {32, 40})
    void parallelForksAfterSharedPromptEqualIndependentRuns(int forkAt) throws Exception {
        Stories260K s = Stories260K.get();
        int[] tokens = oraclePrefix(s, forkAt);
        int[] expected = Arrays.copyOfRange(s.greedyIds(), forkAt, s.steps());
        try (Arena arena = Arena.ofShared(); ExecutorService pool = Executors.newFixedThreadPool(4)) {
            PagedKvStore parent = new PagedKvStore(s.model().config().kvLayout(16), s.steps(), arena);
            Decoder parentDecoder = new Decoder(s.model(), parent);
            parentDecoder.prefill(Arrays.copyOf(tokens, forkAt)); // the last prompt token runs per sequence
            List<Future<int[]>> runs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                PagedKvStore child = parent.fork(forkAt);
                runs.add(pool.submit(() -> new Decoder(s.model(), child, forkAt).generate(tokens, expected.length)));
            }
            runs.add(pool.submit(() -> parentDecoder.generate(tokens, expected.length)));
            for (Future<int[]> run : runs) {
                assertArrayEquals(expected, run.get());
            }
        }
    }

    /**
     * Shared blocks reject writes in both stores; the copied tail is private to the child.
     *
     * @param blockSize tokens per block
     */
    @ParameterizedTest
    @ValueSource(ints = {16, 5})
    void sharedBlocksAreImmutableAndTailsPrivate(int blockSize) {
        int kvDim = 6;
        try (Arena arena = Arena.ofConfined()) {
            PagedKvStore parent = new PagedKvStore(KvLayout.of(2, 3, 2, DType.F32,
                    blockSize), 64, arena);
            float[] vec = new float[kvDim];
            int length = blockSize + 3;
            for (int p = 0; p < length; p++) {
                for (int l = 0; l < 2; l++) {
                    Arrays.fill(vec, p * 10 + l);
                    parent.write(l, p, vec, vec);
                }
            }
            PagedKvStore child = parent.fork(length);
            assertThrows(IllegalStateException.class, () -> child.write(0, blockSize - 1, vec, vec));
            assertThrows(IllegalStateException.class, () -> parent.write(1, 0, vec, vec));
            // The tail block is private: the parent overwrites position blockSize, the child still reads its copy.
            Arrays.fill(vec, -1f);
            parent.write(0, blockSize, vec, vec);
            child.write(0, length, vec, vec);
            float[] seen = new float[1];
            child.read(0, length, (first, n, keys, ko, values, vo) -> {
                if (first == blockSize) {
                    seen[0] = keys.get(ValueLayout.JAVA_FLOAT, ko);
                }
            });
            assertEquals(blockSize * 10f, seen[0]);
            assertThrows(IllegalStateException.class, () -> parent.fork(length + blockSize));
            assertThrows(IndexOutOfBoundsException.class, () -> parent.fork(65));
        }
    }
}
