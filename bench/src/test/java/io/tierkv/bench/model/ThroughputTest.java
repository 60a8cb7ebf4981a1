package io.tierkv.bench.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import org.junit.jupiter.api.Test;

/** The measurement counts what it ran; the figures are printed, never asserted. */
class ThroughputTest {

    /**
     * Both stores are measured; tokens/s go to the test output.
     *
     * @throws Exception when the shared data cannot be read
     */
    @Test
    void measuresArrayAndPagedStores() throws Exception {
        LlamaModel model = Stories260K.get().model();
        LlamaConfig c = model.config();
        int steps = 256;
        Throughput array = Throughput.measure(model, () -> ArrayKvStore.forModel(c, steps), steps, 3, 5);
        Throughput paged;
        try (Arena arena = Arena.ofConfined()) {
            paged = Throughput.measure(model, () -> new PagedKvStore(c.kvLayout(16), steps, arena), steps, 3, 5);
        }
        for (Throughput t : new Throughput[] {array, paged}) {
            assertEquals(5L * steps, t.tokens());
            assertTrue(t.nanos() > 0);
        }
        System.out.printf("stories260K greedy, %d steps: ArrayKvStore %.0f tokens/s, PagedKvStore B=16 %.0f tokens/s%n",
                steps, array.tokensPerSecond(), paged.tokensPerSecond());
        assertThrows(IllegalArgumentException.class,
                () -> Throughput.measure(model, () -> ArrayKvStore.forModel(c, steps), steps, 0, 0));
    }
}
