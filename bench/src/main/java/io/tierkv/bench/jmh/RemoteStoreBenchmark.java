package io.tierkv.bench.jmh;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.remote.RemoteOptions;
import io.tierkv.remote.RemoteStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * Remote put and get of one block through {@link RemoteStore} against plain Lettuce
 * {@code SET}/{@code GET} of the same bytes ({@link ByteArrayCodec}, the sync API), on the same
 * server, <b>paired operation by operation</b>: every invocation of {@link #put} times one store
 * put and one plain put of each kind, every invocation of {@link #get} one store get and one plain
 * get, back to back in the same thread and fork, the order rotating each invocation. Load that
 * comes and goes on a shared machine (other builds) then falls on both sides alike, and the
 * per-iteration ratio, not two scores measured minutes apart, is the figure: each fork prints a
 * {@code pairs} line per measured iteration and a {@code pairs-median} line (JMH's own score is
 * the time of the whole invocation, every side together). The peer is the
 * limit: both pay the same loopback round trip and server work, and the store adds its header,
 * CRC32C on both sides and the verification.
 *
 * <p><b>Scenario.</b> Blocks of 64 KiB, 256 KiB, 1 MiB and 2 MiB (a layout of 8 layers x 8 KV
 * heads x 64 F16 holds 64 KiB per 4 tokens), random bytes, identity of 16 tokens (96 bytes).
 * One thread; the store, plain {@code SET}/{@code GET} and plain {@code SET NX} each have their own
 * client, connection and event-loop thread (RESP2 for the store, Lettuce's default for the peers),
 * so no side finds its event loop still busy from the operation just before it, which two peers
 * sharing a connection would, each time one followed the other.
 * {@code put}: the store's {@code put} of a new key ({@code SET key value NX} from an off-heap
 * segment, CRC32C over identity and payload on the caller's thread), then plain {@code SET} of a
 * new key from a {@code byte[]}, then plain {@code SET ... NX} of a new key (the command the store
 * sends, so that neither peer is the easier one). {@code get}: the store's {@code get} of one
 * stored block (verified in Netty's receive buffer, copied into an off-heap segment), then plain
 * {@code GET} of the same bytes into a new {@code byte[]}. Printed per iteration: microseconds
 * per operation of each side and {@code peer / store} (above 1: the store is faster). The server is started by the benchmark
 * ({@code redis-server --save '' --appendonly no --maxmemory 512mb --maxmemory-policy
 * allkeys-lru}, so new keys evict old ones, the same work for every side) unless
 * {@code TIERKV_REDIS_URL} names one, which should be configured the same way.
 *
 * <p><b>Worst case.</b> The puts at 2 MiB: the store computes a CRC32C over the block before
 * sending, which plain Lettuce does not. A young collection that the peer's {@code GET} arrays
 * trigger pauses whichever operation is running, most often the peer's own (it allocates).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 3, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
        "-Xmx2g"})
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 8, time = 1)
@Threads(1)
public class RemoteStoreBenchmark {

    /** Block payload bytes. */
    @Param({"65536", "262144", "1048576", "2097152"})
    public int blockBytes;

    private Process server;
    private Arena arena;
    private RemoteStore store;
    private RedisClient plainClient;
    private StatefulRedisConnection<byte[], byte[]> plainConnection;
    private RedisCommands<byte[], byte[]> plain;
    private RedisClient plainNxClient;
    private StatefulRedisConnection<byte[], byte[]> plainNxConnection;
    private RedisCommands<byte[], byte[]> plainNx;
    private MemorySegment payload;
    private MemorySegment identity;
    private MemorySegment dst;
    private byte[] payloadBytes;
    private byte[] plainGetKey;
    private final SetArgs nx = SetArgs.Builder.nx();
    private long next;
    private int turn;

    /** Nanoseconds of this iteration's store operations. */
    private long storeNanos;
    /** Nanoseconds of this iteration's plain {@code SET}s or {@code GET}s. */
    private long peerNanos;
    /** Nanoseconds of this iteration's plain {@code SET NX}s (puts only). */
    private long peerNxNanos;
    /** Invocations this iteration. */
    private long ops;
    /** Per measured iteration: store us/op, peer us/op, peer NX us/op. */
    private final List<double[]> iterations = new ArrayList<>();

    /** Clears the sums for a new iteration. */
    @Setup(Level.Iteration)
    public void startIteration() {
        storeNanos = 0;
        peerNanos = 0;
        peerNxNanos = 0;
        ops = 0;
    }

    /**
     * Keeps a measured iteration's microseconds per operation of each side.
     *
     * @param iteration whether this was a warm-up or a measured iteration
     */
    @TearDown(Level.Iteration)
    public void endIteration(IterationParams iteration) {
        if (iteration.getType() == IterationType.MEASUREMENT && ops > 0) {
            iterations.add(new double[] {storeNanos / 1e3 / ops, peerNanos / 1e3 / ops, peerNxNanos / 1e3 / ops});
        }
    }

    /** Starts (or finds) the server, connects both clients and stores the block the gets read. */
    @Setup(Level.Trial)
    public void setUp() throws IOException, InterruptedException {
        String url = System.getenv("TIERKV_REDIS_URL");
        if (url == null || url.isBlank()) {
            int port = freePort();
            server = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                    "--save", "", "--appendonly", "no", "--daemonize", "no", "--maxmemory", "512mb",
                    "--maxmemory-policy", "allkeys-lru").redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            awaitPing(port);
            url = "redis://127.0.0.1:" + port;
        }
        URI u = URI.create(url);
        long fingerprint = KvLayout.of(8, 8, 64, DType.F16, 4).fingerprint();
        store = RemoteStore.open(RemoteOptions.of(url).withNamespace("bench" + System.nanoTime())
                .withTimeoutNanos(TimeUnit.SECONDS.toNanos(5)), fingerprint);
        plainClient = RedisClient.create(RedisURI.create(u.getHost(), u.getPort()));
        plainConnection = plainClient.connect(ByteArrayCodec.INSTANCE);
        plain = plainConnection.sync();
        plainNxClient = RedisClient.create(RedisURI.create(u.getHost(), u.getPort()));
        plainNxConnection = plainNxClient.connect(ByteArrayCodec.INSTANCE);
        plainNx = plainNxConnection.sync();

        arena = Arena.ofShared();
        payload = arena.allocate(blockBytes, 64);
        SplittableRandom r = new SplittableRandom(14);
        for (long off = 0; off < blockBytes; off += 8) {
            payload.set(ValueLayout.JAVA_LONG_UNALIGNED, off, r.nextLong());
        }
        payloadBytes = payload.toArray(ValueLayout.JAVA_BYTE);
        identity = arena.allocate(BlockIdentity.bytes(16));
        BlockIdentity.writeKey(identity, 0, 1, 2, 3, 4);
        dst = arena.allocate(blockBytes, 64);
        if (!store.put(-1, -1, identity, payload)) {
            throw new IllegalStateException("the block the gets read was not stored: " + store.stats());
        }
        plainGetKey = ("plain:get:" + System.nanoTime()).getBytes(StandardCharsets.US_ASCII);
        plain.set(plainGetKey, payloadBytes);
    }

    /**
     * Prints this fork's pairs (see {@link #printPairs}), checks that no operation missed or
     * dropped, then stops everything it started.
     *
     * @param params which benchmark ran
     */
    @TearDown(Level.Trial)
    public void tearDown(BenchmarkParams params) throws InterruptedException {
        printPairs(params.getBenchmark().endsWith(".put"));
        var s = store.stats();
        store.close();
        plainConnection.close();
        plainClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        plainNxConnection.close();
        plainNxClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        arena.close();
        if (server != null) {
            server.destroy();
            server.waitFor(10, TimeUnit.SECONDS);
        }
        if (s.misses() != 0 || s.putsDropped() != 0 || s.putsPresent() != 0) {
            throw new IllegalStateException("a remote operation missed or was dropped: " + s);
        }
    }

    /**
     * One store put and one plain {@code SET} and {@code SET NX} of the same bytes, each under a
     * new key, timed apart, in an order that rotates every invocation.
     *
     * @return whether every put stored its value (tear-down fails the run if the store's did not)
     */
    @Benchmark
    public boolean put() {
        int first = turn;
        turn = (turn + 1) % 3;
        boolean ok = true;
        for (int i = 0; i < 3; i++) {
            int side = (first + i) % 3;
            long key = next++;
            long t0 = System.nanoTime();
            switch (side) {
                case 0 -> ok &= store.put(key, blockBytes, identity, payload);
                case 1 -> ok &= "OK".equals(plain.set(plainKey(key), payloadBytes));
                default -> ok &= "OK".equals(plainNx.set(plainKey(key), payloadBytes, nx));
            }
            long dt = System.nanoTime() - t0;
            switch (side) {
                case 0 -> storeNanos += dt;
                case 1 -> peerNanos += dt;
                default -> peerNxNanos += dt;
            }
        }
        ops++;
        return ok;
    }

    /**
     * One store get (read, verified, copied off-heap) and one plain {@code GET} of the same bytes,
     * timed apart, the order alternating every invocation.
     *
     * @return whether both found their value (tear-down fails the run if the store's did not)
     */
    @Benchmark
    public boolean get() {
        boolean storeFirst = (turn++ & 1) == 0;
        boolean ok = true;
        for (int i = 0; i < 2; i++) {
            long t0 = System.nanoTime();
            if (storeFirst == (i == 0)) {
                ok &= store.get(-1, -1, identity, dst);
                storeNanos += System.nanoTime() - t0;
            } else {
                ok &= plain.get(plainGetKey) != null;
                peerNanos += System.nanoTime() - t0;
            }
        }
        ops++;
        return ok;
    }

    /**
     * Prints one line per measured iteration of this fork and one summary line, for example
     * {@code pairs put 65536 B: store 150.3 us, SET 129.1 us (SET/store 0.86), SET NX 143.5 us
     * (0.95)}; the summary line ({@code pairs-median}) holds the medians over the fork's
     * iterations of each side's time and of each ratio.
     */
    private void printPairs(boolean put) {
        String name = put ? "put" : "get";
        double[][] cols = new double[5][iterations.size()];
        System.out.println();
        for (int i = 0; i < iterations.size(); i++) {
            double[] it = iterations.get(i);
            cols[0][i] = it[0];
            cols[1][i] = it[1];
            cols[2][i] = it[2];
            cols[3][i] = it[1] / it[0];
            cols[4][i] = it[2] / it[0];
            System.out.println(line("pairs", name, cols[0][i], cols[1][i], cols[2][i], cols[3][i], cols[4][i], put));
        }
        System.out.println(line("pairs-median", name, median(cols[0]), median(cols[1]), median(cols[2]),
                median(cols[3]), median(cols[4]), put));
    }

    private String line(String tag, String name, double store, double peer, double peerNx, double ratio,
            double ratioNx, boolean put) {
        String s = String.format(Locale.ROOT, "%s %s %d B: store %.1f us, %s %.1f us (%s/store %.3f)", tag, name,
                blockBytes, store, put ? "SET" : "GET", peer, put ? "SET" : "GET", ratio);
        return put ? s + String.format(Locale.ROOT, ", SET NX %.1f us (SET NX/store %.3f)", peerNx, ratioNx) : s;
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length == 0 ? Double.NaN : s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private byte[] plainKey(long key) {
        return ("plain:" + blockBytes + ":" + key).getBytes(StandardCharsets.US_ASCII);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private void awaitPing(int port) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
                byte[] reply = s.getInputStream().readNBytes(7);
                if (new String(reply, StandardCharsets.US_ASCII).equals("+PONG\r\n")) {
                    return;
                }
            } catch (IOException e) {
                // not up yet
            }
            Thread.sleep(20);
        }
        server.destroyForcibly();
        throw new UncheckedIOException(new IOException("redis-server on port " + port + " did not start"));
    }
}
