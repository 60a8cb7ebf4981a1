package io.tierkv.bench.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Greedy decoding equals {@code oracle_greedy.json} exactly, over every kind of KV store. */
class DecoderOracleTest {

    /**
     * The stores under test: the plain-array reference and paged stores of several block sizes.
     *
     * @return named store factories
     */
    static Stream<Named<BiFunction<LlamaConfig, Arena, KvStore>>> stores() {
        return Stream.of(
                Named.of("ArrayKvStore", (c, a) -> ArrayKvStore.forModel(c, c.seqLen())),
                Named.of("PagedKvStore B=16", (c, a) -> new PagedKvStore(c.kvLayout(16), c.seqLen(), a)),
                Named.of("PagedKvStore B=5", (c, a) -> new PagedKvStore(c.kvLayout(5), c.seqLen(), a)),
                Named.of("PagedKvStore B=1", (c, a) -> new PagedKvStore(c.kvLayout(1), c.seqLen(), a)),
                Named.of("PagedKvStore B=512", (c, a) -> new PagedKvStore(c.kvLayout(512), c.seqLen(), a)));
    }

    /**
     * 256 greedy steps from BOS give oracle_greedy.json's ids exactly.
     *
     * @param store makes the store under test from the model shape and an arena
     * @throws Exception when the shared data cannot be read
     */
    @ParameterizedTest
    @MethodSource("stores")
    void greedyFromBosMatchesOracle(BiFunction<LlamaConfig, Arena, KvStore> store) throws Exception {
        Stories260K s = Stories260K.get();
        try (Arena arena = Arena.ofConfined()) {
            Decoder d = new Decoder(s.model(), store.apply(s.model().config(), arena));
            int[] ids = d.generate(new int[] {s.startToken()}, s.steps());
            assertArrayEquals(s.greedyIds(), ids);
            assertEquals(s.steps(), d.position());
        }
    }

    /**
     * The encoded prompt, then 64 greedy steps, give the prompt case's ids exactly.
     *
     * @param store makes the store under test from the model shape and an arena
     * @throws Exception when the shared data cannot be read
     */
    @ParameterizedTest
    @MethodSource("stores")
    void promptCaseMatchesOracle(BiFunction<LlamaConfig, Arena, KvStore> store) throws Exception {
        Stories260K s = Stories260K.get();
        int[] prompt = s.tokenizer().encode(s.prompt(), true, false);
        try (Arena arena = Arena.ofConfined()) {
            Decoder d = new Decoder(s.model(), store.apply(s.model().config(), arena));
            int[] next = d.generate(prompt, s.promptNext().length);
            assertArrayEquals(s.promptNext(), next);
            assertEquals(prompt.length + next.length - 1, d.position());
        }
    }

    /**
     * The first eight positions' argmax, max logit and logit sum match the oracle within float32 noise.
     *
     * @param store makes the store under test from the model shape and an arena
     * @throws Exception when the shared data cannot be read
     */
    @ParameterizedTest
    @MethodSource("stores")
    void firstLogitsMatchOracleNumerically(BiFunction<LlamaConfig, Arena, KvStore> store) throws Exception {
        Stories260K s = Stories260K.get();
        try (Arena arena = Arena.ofConfined()) {
            Decoder d = new Decoder(s.model(), store.apply(s.model().config(), arena));
            for (Object o : s.firstPositions()) {
                Map<?, ?> p = (Map<?, ?>) o;
                assertEquals(((Double) p.get("pos")).intValue(), d.position());
                float[] logits = d.forward(((Double) p.get("input_token")).intValue());
                int argmax = Decoder.argmax(logits);
                double sum = 0;
                for (float l : logits) {
                    sum += l;
                }
                assertEquals(((Double) p.get("argmax")).intValue(), argmax);
                // float32 (here) against numpy float32 with another summation order
                assertEquals((Double) p.get("max_logit"), logits[argmax], 1e-4);
                assertEquals((Double) p.get("logit_sum"), sum, 1e-2);
            }
        }
    }
}
