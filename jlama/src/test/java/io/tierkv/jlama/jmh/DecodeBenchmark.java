package io.tierkv.jlama.jmh;

import java.io.IOException;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Decode speed: 128 tokens after a 16-token prompt (the whole sequence on the device, 9 blocks of
 * 16), TierKV against stock Jlama's own KV in the same run; reported as time per generated token
 * (the prompt's prefill is included, 1 step in 129). Every TierKV step takes a lease over all
 * blocks of the sequence and marks its position written; stock Jlama indexes its pages directly.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class DecodeBenchmark {

    /** Which KV: stock (Jlama's own) or tierkv (every block on the device). */
    @Param({"stock", "tierkv"})
    public String kv;

    private JlamaBenchmarks b;
    private final SplittableRandom rnd = new SplittableRandom(42);

    /** Creates the state (JMH instantiates it). */
    public DecodeBenchmark() {
    }

    /**
     * Loads the model.
     *
     * @throws IOException if the disk tier's directory cannot be made
     */
    @Setup(Level.Trial)
    public void setUp() throws IOException {
        b = new JlamaBenchmarks(4096, 64);
    }

    /**
     * 128 greedy tokens after a fresh 16-token prompt.
     *
     * @return the last token
     */
    @Benchmark
    @OperationsPerInvocation(128)
    public int decode128() {
        int[] prompt = b.tokens(rnd, 16);
        return kv.equals("stock") ? b.stock(prompt, 128) : b.tierKv(prompt, 128);
    }

    /**
     * Frees everything.
     *
     * @throws IOException if the temporary directory cannot be removed
     */
    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        b.close();
    }
}
