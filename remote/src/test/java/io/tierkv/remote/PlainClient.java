package io.tierkv.remote;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A plain Lettuce client ({@link ByteArrayCodec}) on one server, for tests to look at and damage
 * what the store wrote: GET, SET, SETRANGE, SCAN counts.
 */
final class PlainClient implements AutoCloseable {

    private final RedisClient client;
    private final StatefulRedisConnection<byte[], byte[]> connection;

    /**
     * Connects.
     *
     * @param host host
     * @param port port
     */
    PlainClient(String host, int port) {
        client = RedisClient.create(RedisURI.create(host, port));
        connection = client.connect(ByteArrayCodec.INSTANCE);
    }

    /** {@return the sync commands} */
    RedisCommands<byte[], byte[]> sync() {
        return connection.sync();
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** {@return how many keys start with {@code prefix} on this server} */
    long count(String prefix) {
        long n = 0;
        io.lettuce.core.ScanCursor cursor = io.lettuce.core.ScanCursor.INITIAL;
        do {
            io.lettuce.core.KeyScanCursor<byte[]> page = sync().scan(cursor,
                    io.lettuce.core.ScanArgs.Builder.matches(prefix + "*").limit(1000));
            n += page.getKeys().size();
            cursor = page;
        } while (!cursor.isFinished());
        return n;
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
}
