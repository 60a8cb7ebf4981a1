package io.tierkv.jlama.jmh;

import java.io.IOException;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Time to first token of a 448-token prompt whose first 384 tokens (24 blocks of 16) are cached,
 * on the device, on the host or only on disk, against stock Jlama computing all 448 (the peer, in
 * the same run). jlama-random-d256 (4 layers, 2 KV heads, head size 64: 64 KiB blocks), Jlama's
 * batched prefill, an emulated device. The last 64 tokens are new seeded ids in every invocation,
 * so exactly the 24 prefix blocks hit; before each invocation every block is demoted to the host
 * ({@code host}) and spilled to disk with its host copy dropped ({@code disk}), so the measured
 * call promotes all 24 (worst case for those tiers). The op is one whole request: prefix match,
 * promotion, prefill of the rest, the first sample.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class FirstTokenBenchmark {

    /** Where the 384 cached tokens are: stock (no cache, Jlama computes all 448), device, host, disk. */
    @Param({"stock", "device", "host", "disk"})
    public String cachedOn;

    private JlamaBenchmarks b;
    private int[] prefix;
    private int[] prompt;
    private final SplittableRandom rnd = new SplittableRandom(42);

    /** Creates the state (JMH instantiates it). */
    public FirstTokenBenchmark() {
    }

    /**
     * Loads the model and caches the 384-token prefix.
     *
     * @throws IOException if the disk tier's directory cannot be made
     */
    @Setup(Level.Trial)
    public void setUp() throws IOException {
        b = new JlamaBenchmarks(2048, 2048);
        prefix = b.tokens(new SplittableRandom(7), 384);
        b.tierKv(IntStream.concat(IntStream.of(prefix), IntStream.of(1)).toArray(), 1);
    }

    /** A fresh 64-token suffix; the blocks sent to the tier under test. */
    @Setup(Level.Invocation)
    public void place() {
        prompt = IntStream.concat(IntStream.of(prefix), IntStream.of(b.tokens(rnd, 64))).toArray();
        if (cachedOn.equals("host") || cachedOn.equals("disk")) {
            b.kv.demote(Integer.MAX_VALUE);
        }
        if (cachedOn.equals("disk")) {
            b.kv.evictHost(Integer.MAX_VALUE);
        }
    }

    /**
     * One request to its first token.
     *
     * @return the first token
     */
    @Benchmark
    public int firstToken() {
        return cachedOn.equals("stock") ? b.stock(prompt, 1) : b.tierKv(prompt, 1);
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
