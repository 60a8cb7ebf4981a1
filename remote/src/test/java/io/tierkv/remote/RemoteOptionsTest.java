package io.tierkv.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Options and URLs: every rejection names the field, the value and the bound. */
class RemoteOptionsTest {

    private static String rejection(Runnable r) {
        return assertThrows(IllegalArgumentException.class, r::run).getMessage();
    }

    @Test
    void urlsOfBothKindsParse() {
        RemoteEndpoints one = RemoteEndpoints.parse("redis://127.0.0.1:6379");
        assertFalse(one.cluster());
        assertEquals(List.of(new RemoteEndpoints.Node("127.0.0.1", 6379)), one.nodes());
        RemoteEndpoints three = RemoteEndpoints.parse("redis-cluster://a:1,b:2,[::1]:3");
        assertTrue(three.cluster());
        assertEquals(List.of(new RemoteEndpoints.Node("a", 1), new RemoteEndpoints.Node("b", 2),
                new RemoteEndpoints.Node("::1", 3)), three.nodes());
        assertTrue(RemoteOptions.of("redis-cluster://h:7000").cluster());
    }

    @Test
    void badUrlsAreRefusedWithTheirText() {
        assertEquals("url: http://x:1 (expected redis://HOST:PORT or redis-cluster://HOST:PORT[,HOST:PORT...])",
                rejection(() -> RemoteOptions.of("http://x:1")));
        assertEquals("url: redis://a:1,b:2 (expected one HOST:PORT after redis://; use redis-cluster:// for several nodes)",
                rejection(() -> RemoteOptions.of("redis://a:1,b:2")));
        assertEquals("url: redis://a:0 (expected a port in [1, 65535], got 0)",
                rejection(() -> RemoteOptions.of("redis://a:0")));
        assertEquals("url: redis://a (expected HOST:PORT, got 'a')", rejection(() -> RemoteOptions.of("redis://a")));
        assertEquals("url: null (expected a URL)", rejection(() -> RemoteOptions.of(null)));
        assertEquals("url: redis://127.0.0.1:6391:1 (expected a host name or address (an IPv6 address in brackets,"
                + " [::1]), got '127.0.0.1:6391')", rejection(() -> RemoteOptions.of("redis://127.0.0.1:6391:1")),
                "a second port is not a host");
        assertEquals("url: redis://::1:6379 (expected a host name or address (an IPv6 address in brackets,"
                + " [::1]), got '::1')", rejection(() -> RemoteOptions.of("redis://::1:6379")));
    }

    @Test
    void aServerThatRefusesTheConnectionIsNamedAsRefused() throws Exception {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort(); // closed below: nothing listens there
        }
        String url = "redis://127.0.0.1:" + port;
        RemoteUnavailableException e = assertThrows(RemoteUnavailableException.class,
                () -> RemoteStore.open(RemoteOptions.of(url), 1L).close());
        assertTrue(e.getMessage().startsWith("remote store unavailable at " + url + ": "), e.getMessage());
        assertTrue(e.getMessage().contains("Connection refused"), e.getMessage());
    }

    @Test
    void schemesAreCaseInsensitive() {
        assertEquals(List.of(new RemoteEndpoints.Node("h", 1)), RemoteEndpoints.parse("REDIS://h:1").nodes());
        assertTrue(RemoteEndpoints.parse("Redis-Cluster://h:1").cluster());
        assertEquals("url: REDISS://h:1 (not supported: TLS (rediss://); expected redis://HOST:PORT or"
                + " redis-cluster://HOST:PORT[,HOST:PORT...])", rejection(() -> RemoteOptions.of("REDISS://h:1")));
    }

    @Test
    void urlsWithWhatThisVersionDoesNotSupportSaySo() {
        String auth = "not supported: a user name or password (AUTH); expected HOST:PORT with no 'USER:PASSWORD@')";
        assertEquals("url: redis://***@h:1 (" + auth, rejection(() -> RemoteOptions.of("redis://:secret@h:1")));
        assertEquals("url: redis://***@h:1 (" + auth, rejection(() -> RemoteOptions.of("redis://u:p@h:1")));
        assertEquals("url: redis-cluster://***@a:1,b:2 (" + auth,
                rejection(() -> RemoteOptions.of("redis-cluster://u:s@cret@a:1,b:2")));
        assertEquals("url: redis://h:21977/3 (not supported: a database number or path, got '/3'"
                + " (the store uses database 0); expected HOST:PORT)",
                rejection(() -> RemoteOptions.of("redis://h:21977/3")));
        assertEquals("url: redis://h:1/ (not supported: a database number or path, got '/'"
                + " (the store uses database 0); expected HOST:PORT)",
                rejection(() -> RemoteOptions.of("redis://h:1/")));
        assertEquals("url: redis://h:1?*** (not supported: URL options (?..., not shown: they may hold a password))",
                rejection(() -> RemoteOptions.of("redis://h:1?timeout=5")));
        String query = rejection(() -> RemoteOptions.of("redis://127.0.0.1:21988/0?password=secret"));
        assertFalse(query.contains("secret"), query);
        assertEquals("url: rediss://h:1 (not supported: TLS (rediss://); expected redis://HOST:PORT or"
                + " redis-cluster://HOST:PORT[,HOST:PORT...])", rejection(() -> RemoteOptions.of("rediss://h:1")));
        assertEquals("url: http://***@x:1 (expected redis://HOST:PORT or redis-cluster://HOST:PORT[,HOST:PORT...])",
                rejection(() -> RemoteOptions.of("http://u:secret@x:1")), "a password is never echoed");
    }

    @Test
    void aPortIsDigitsOnly() {
        assertEquals("url: redis://127.0.0.1:+21977 (expected a port in [1, 65535], digits only, got '+21977')",
                rejection(() -> RemoteOptions.of("redis://127.0.0.1:+21977")));
        assertEquals("url: redis://h:\u0663 (expected a port in [1, 65535], digits only, got '\u0663')",
                rejection(() -> RemoteOptions.of("redis://h:\u0663")), "an Arabic-Indic three");
        assertEquals("url: redis://h:-1 (expected a port in [1, 65535], digits only, got '-1')",
                rejection(() -> RemoteOptions.of("redis://h:-1")));
        assertEquals("url: redis://h:99999999999 (expected a port in [1, 65535], got 99999999999)",
                rejection(() -> RemoteOptions.of("redis://h:99999999999")));
        assertEquals("url: redis://h:65536 (expected a port in [1, 65535], got 65536)",
                rejection(() -> RemoteOptions.of("redis://h:65536")));
        assertEquals(new RemoteEndpoints.Node("h", 65535), RemoteEndpoints.parse("redis://h:65535").nodes().getFirst());
    }

    @Test
    void everyFieldIsCheckedAgainstItsBound() {
        RemoteOptions o = RemoteOptions.of("redis://h:1");
        assertEquals("namespace: 'a:b' (expected 1 to 64 characters of [A-Za-z0-9._-])",
                rejection(() -> o.withNamespace("a:b")));
        assertEquals("timeoutNanos: 0 (expected 1000000 <= timeoutNanos <= 60000000000)",
                rejection(() -> o.withTimeoutNanos(0)));
        assertEquals("connectTimeoutNanos: 999999 (expected 1000000 <= connectTimeoutNanos <= 60000000000)",
                rejection(() -> o.withConnectTimeoutNanos(999_999)));
        assertEquals("ttlSeconds: -1 (expected 0 <= ttlSeconds <= 315360000)", rejection(() -> o.withTtlSeconds(-1)));
        assertEquals("eviction: null (expected SERVER or LRU)", rejection(() -> o.withEviction(null)));
        assertEquals("lruCapacityBlocks: 0 (expected 1 <= lruCapacityBlocks <= 1099511627776)",
                rejection(() -> o.withLruCapacityBlocks(0)));
        assertEquals("breakerFailures: 0 (expected 1 <= breakerFailures <= 1000000)",
                rejection(() -> o.withBreakerFailures(0)));
        assertEquals("breakerOpenNanos: 1 (expected 1000000 <= breakerOpenNanos <= 600000000000)",
                rejection(() -> o.withBreakerOpenNanos(1)));
        assertEquals("maxInFlightBytes: 0 (expected 1 <= maxInFlightBytes <= 1099511627776)",
                rejection(() -> o.withMaxInFlightBytes(0)));
        assertEquals("reconnectMaxDelayNanos: 0 (expected 1000000 <= reconnectMaxDelayNanos <= 600000000000)",
                rejection(() -> o.withReconnectMaxDelayNanos(0)));
        RemoteOptions lru = o.withLruCapacityBlocks(10).withEviction(RemoteEviction.LRU).withNamespace("a.b-c_9");
        assertEquals(10, lru.lruCapacityBlocks());
        assertEquals(RemoteEviction.LRU, lru.eviction());
    }
}
