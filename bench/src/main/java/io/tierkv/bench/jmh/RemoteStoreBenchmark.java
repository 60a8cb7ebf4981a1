package io.tierkv.bench.jmh;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
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
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * Remote put and get of one block through {@link RemoteStore} against plain Lettuce
 * {@code SET}/{@code GET} of the same bytes ({@link ByteArrayCodec}, the sync API), on the same
 * server in the same run: the peer is the limit, since both pay the same loopback round trip and
 * server work, and the store adds its header, CRC32C on both sides and the verification.
 *
 * <p><b>Scenario.</b> Blocks of 64 KiB, 256 KiB, 1 MiB and 2 MiB (a layout of 8 layers x 8 KV
 * heads x 64 F16 holds 64 KiB per 4 tokens), random bytes, identity of 16 tokens. One thread, one
 * connection each. {@code remotePut} stores a new key every operation ({@code SET NX}, from an
 * off-heap segment), {@code lettucePut} {@code SET}s a new key from a {@code byte[]};
 * {@code remoteGet} reads, verifies and copies one stored block into an off-heap segment,
 * {@code lettuceGet} {@code GET}s it into a new {@code byte[]}. The server is started by the
 * benchmark ({@code redis-server --save '' --appendonly no --maxmemory 512mb --maxmemory-policy
 * allkeys-lru}, so the puts' new keys evict old ones, the same work for both) unless
 * {@code TIERKV_REDIS_URL} names one, which should be configured the same way.
 *
 * <p><b>Worst case.</b> The puts at 2 MiB: the store computes a CRC32C over the block on the
 * caller's thread before sending, which plain Lettuce does not.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
        "-Xmx2g"})
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
    private MemorySegment payload;
    private MemorySegment identity;
    private MemorySegment dst;
    private byte[] payloadBytes;
    private byte[] plainGetKey;
    private long next;

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

    /** Checks that no operation missed or dropped, then stops everything it started. */
    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        var s = store.stats();
        store.close();
        plainConnection.close();
        plainClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
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
     * Stores a new block.
     *
     * @return whether it was stored (always, or tear-down fails the run)
     */
    @Benchmark
    public boolean remotePut() {
        return store.put(next++, blockBytes, identity, payload);
    }

    /**
     * Plain Lettuce {@code SET} of the same bytes under a new key.
     *
     * @return the reply
     */
    @Benchmark
    public String lettucePut() {
        return plain.set(("plain:" + blockBytes + ":" + next++).getBytes(StandardCharsets.US_ASCII), payloadBytes);
    }

    /**
     * Reads, verifies and copies the stored block.
     *
     * @return whether it was found
     */
    @Benchmark
    public boolean remoteGet() {
        return store.get(-1, -1, identity, dst);
    }

    /**
     * Plain Lettuce {@code GET} of the same bytes.
     *
     * @return the value
     */
    @Benchmark
    public byte[] lettuceGet() {
        return plain.get(plainGetKey);
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
