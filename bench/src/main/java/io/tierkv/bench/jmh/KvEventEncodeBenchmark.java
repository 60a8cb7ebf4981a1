package io.tierkv.bench.jmh;

import io.tierkv.core.event.KvMedium;
import io.tierkv.observe.KvEventEncoder;
import io.tierkv.tiers.events.KvEventView;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * The KV event thread's encoding of one batch into vLLM's msgpack layout: TierKV's
 * {@link KvEventEncoder} against the same bytes packed one field per msgpack-core call (the
 * peer, what a straightforward use of {@code MessagePacker} does), per event.
 *
 * <p><b>Scenario.</b> A batch of {@value #BATCH} events, as the event queue delivers them under
 * load (its largest batch), half {@code BlockStored} with B token ids (ids uniform in a 128,256
 * vocabulary, Llama 3's, so most take 3 or 5 bytes) and a parent, half {@code BlockRemoved}, media
 * mixed. Both sides produce the whole payload as a fresh {@code byte[]} (the encoder's
 * {@link KvEventEncoder#encode(double, KvEventView)}, the peer's {@code toByteArray()}), and the
 * bytes are equal (checked at setup). The score is nanoseconds per event.
 *
 * <p><b>Worst case.</b> Large blocks: the token ids are the bulk of a BlockStored (B = 512 is
 * about 1.5 KiB of msgpack per event), which the encoder packs in one pass and the peer one call
 * per id.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class KvEventEncodeBenchmark {

    /** Events per batch: the event queue's largest batch. */
    static final int BATCH = 1024;

    /** Token ids per block, B. */
    @Param({"16", "64", "512"})
    public int blockSizeTokens;

    private Batch batch;
    private KvEventEncoder encoder;

    /**
     * The batch in primitive arrays, read in place as the event queue's ring view is (the view
     * both sides read).
     */
    private record Batch(KvEventView.Type[] type, KvMedium[] medium, long[] hashHi, long[] parentHi, int[][] tokens)
            implements KvEventView {

        @Override
        public int size() {
            return type.length;
        }

        @Override
        public Type type(int i) {
            return type[i];
        }

        @Override
        public KvMedium medium(int i) {
            return medium[i];
        }

        @Override
        public long hashHi(int i) {
            return hashHi[i];
        }

        @Override
        public long hashLo(int i) {
            return 1;
        }

        @Override
        public boolean hasParent(int i) {
            return type[i] == Type.BLOCK_STORED;
        }

        @Override
        public long parentHashHi(int i) {
            return parentHi[i];
        }

        @Override
        public long parentHashLo(int i) {
            return hasParent(i) ? 1 : 0;
        }

        @Override
        public int tokenCount(int i) {
            return tokens[i].length;
        }

        @Override
        public int tokenId(int i, int j) {
            return tokens[i][j];
        }

        @Override
        public int copyTokenIds(int i, int[] dst, int offset) {
            System.arraycopy(tokens[i], 0, dst, offset, tokens[i].length);
            return tokens[i].length;
        }

        @Override
        public int blockSizeTokens(int i) {
            return type[i] == Type.BLOCK_STORED ? tokens[i].length : 0;
        }
    }

    /** Creates the state; JMH sets the parameters and calls {@link #setUp()}. */
    public KvEventEncodeBenchmark() {
    }

    /**
     * Builds the batch (seed 42) and checks that both sides produce the same bytes.
     *
     * @throws IllegalStateException if they differ
     */
    @Setup(Level.Trial)
    public void setUp() {
        SplittableRandom random = new SplittableRandom(42);
        KvMedium[] media = KvMedium.values();
        batch = new Batch(new KvEventView.Type[BATCH], new KvMedium[BATCH], new long[BATCH], new long[BATCH],
                new int[BATCH][]);
        for (int i = 0; i < BATCH; i++) {
            boolean stored = i % 2 == 0;
            batch.type()[i] = stored ? KvEventView.Type.BLOCK_STORED : KvEventView.Type.BLOCK_REMOVED;
            batch.medium()[i] = media[random.nextInt(media.length)];
            batch.hashHi()[i] = random.nextLong();
            batch.parentHi()[i] = stored ? random.nextLong() : 0;
            batch.tokens()[i] = stored ? random.ints(blockSizeTokens, 0, 128_256).toArray() : new int[0];
        }
        encoder = new KvEventEncoder(0);
        if (!Arrays.equals(tierkv(), msgpackFieldByField())) {
            throw new IllegalStateException("the encoder and the peer disagree");
        }
    }

    /**
     * TierKV's encoder.
     *
     * @return the payload
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public byte[] tierkv() {
        return encoder.encode(1.7e9, batch);
    }

    /**
     * The peer: one msgpack-core call per field and per token id.
     *
     * @return the payload
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public byte[] msgpackFieldByField() {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(3);
            p.packDouble(1.7e9);
            p.packArrayHeader(BATCH);
            for (int i = 0; i < BATCH; i++) {
                if (batch.type(i) == KvEventView.Type.BLOCK_STORED) {
                    p.packArrayHeader(8);
                    p.packString("BlockStored");
                    p.packArrayHeader(1);
                    p.packLong(batch.hashHi(i));
                    p.packLong(batch.parentHashHi(i));
                    int[] tokens = batch.tokens()[i];
                    p.packArrayHeader(tokens.length);
                    for (int t : tokens) {
                        p.packInt(t);
                    }
                    p.packInt(tokens.length);
                    p.packNil();
                    p.packString(batch.medium(i).name());
                    p.packNil();
                } else {
                    p.packArrayHeader(3);
                    p.packString("BlockRemoved");
                    p.packArrayHeader(1);
                    p.packLong(batch.hashHi(i));
                    p.packString(batch.medium(i).name());
                }
            }
            p.packInt(0);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
