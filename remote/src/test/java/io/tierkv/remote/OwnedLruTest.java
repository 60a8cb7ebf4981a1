package io.tierkv.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.remote.testing.RedisTargets;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The owned LRU on a standalone server and on a 3-node cluster, and blocks spreading over the
 * cluster's shards.
 */
class OwnedLruTest {

    private static final long FINGERPRINT = KvLayout.of(1, 1, 8, DType.F16, 16).fingerprint();
    private static RedisTargets standalone;
    private static RedisTargets cluster;
    private static List<PlainClient> standaloneNodes;
    private static List<PlainClient> clusterNodes;

    @BeforeAll
    static void start() throws Exception {
        standalone = RedisTargets.standalone();
        cluster = RedisTargets.cluster();
        URI u = URI.create(standalone.url());
        standaloneNodes = List.of(new PlainClient(u.getHost(), u.getPort()));
        clusterNodes = masters(cluster.url());
    }

    @AfterAll
    static void stop() throws Exception {
        for (List<PlainClient> nodes : new ArrayList<>(java.util.Arrays.asList(standaloneNodes, clusterNodes))) {
            if (nodes != null) {
                nodes.forEach(PlainClient::close);
            }
        }
        if (standalone != null) {
            standalone.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Plain clients on the cluster's masters, found through the cluster's own topology. */
    private static List<PlainClient> masters(String url) {
        RemoteEndpoints seeds = RemoteEndpoints.parse(url);
        List<RedisURI> uris = seeds.nodes().stream().map(n -> RedisURI.create(n.host(), n.port())).toList();
        RedisClusterClient client = RedisClusterClient.create(uris);
        try {
            List<PlainClient> out = new ArrayList<>();
            for (RedisClusterNode n : client.getPartitions()) {
                if (n.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                    out.add(new PlainClient(n.getUri().getHost(), n.getUri().getPort()));
                }
            }
            return out;
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static RemoteOptions lru(String url, long capacity) {
        return RemoteOptions.of(url).withNamespace("lru" + UUID.randomUUID().toString().substring(0, 8))
                .withTimeoutNanos(TimeUnit.SECONDS.toNanos(5)).withEviction(RemoteEviction.LRU)
                .withLruCapacityBlocks(capacity);
    }

    private static long count(List<PlainClient> nodes, RemoteStore store) {
        String prefix = RemoteCodec.blockKeyPrefix(store.options().namespace(), FINGERPRINT);
        return nodes.stream().mapToLong(n -> n.count(prefix)).sum();
    }

    @Test
    void standaloneTrimsExactlyToCapacityInLruOrder() {
        trimsExactlyToCapacityInLruOrder(standalone.url(), standaloneNodes);
    }

    @Test
    void clusterTrimsExactlyToCapacityInLruOrder() {
        trimsExactlyToCapacityInLruOrder(cluster.url(), clusterNodes);
    }

    private void trimsExactlyToCapacityInLruOrder(String url, List<PlainClient> nodes) {
        try (Arena arena = Arena.ofShared(); RemoteStore store = RemoteStore.open(lru(url, 4), FINGERPRINT)) {
            TestBlocks b = new TestBlocks(arena, 99, 2048, 16);
            for (int i = 0; i < 4; i++) {
                assertTrue(store.put(b.hi(i), b.lo(i), b.identity(i), b.payload(i)));
            }
            assertEquals(4, count(nodes, store));
            assertTrue(store.get(b.hi(0), b.lo(0), b.identity(0), b.dst()), "touch block 0");
            assertTrue(store.put(b.hi(4), b.lo(4), b.identity(4), b.payload(4)));
            assertEquals(4, count(nodes, store), "trimmed to capacity");
            assertEquals(List.of(true, false, true, true, true), present(store, b, 5), "block 1 was least recent");
            // a chain read [2, 3]: the chain's first block becomes the most recent, its tail goes first
            MemorySegment[] ids = {b.identity(2), b.identity(3)};
            MemorySegment[] dsts = {b.dst(), b.dst()};
            assertEquals(2, store.getAll(new long[] {b.hi(2), b.hi(3)}, new long[] {b.lo(2), b.lo(3)}, ids, dsts, 2));
            assertTrue(store.put(b.hi(5), b.lo(5), b.identity(5), b.payload(5)));
            assertTrue(store.put(b.hi(6), b.lo(6), b.identity(6), b.payload(6)));
            assertTrue(store.put(b.hi(7), b.lo(7), b.identity(7), b.payload(7)));
            assertEquals(List.of(false, false, true, false, false, true, true, true), present(store, b, 8),
                    "evicted in order: 0 (touched before the chain), 4, then 3 (the chain's tail) before 2");
            assertEquals(4, count(nodes, store));
            assertEquals(4, store.stats().lruEvicted());
            MemorySegment dst = b.dst();
            assertTrue(store.get(b.hi(2), b.lo(2), b.identity(2), dst));
            assertTrue(b.holds(dst, 2));
        }
    }

    @Test
    void standalonePutAllStoresOnceIndexesInOrderAndTrimsInOneCall() {
        putAllStoresOnceIndexesInOrderAndTrims(standalone.url(), standaloneNodes);
    }

    @Test
    void clusterPutAllStoresOnceIndexesInOrderAndTrimsInOneCall() {
        putAllStoresOnceIndexesInOrderAndTrims(cluster.url(), clusterNodes);
    }

    /** Pipelined write-through: six blocks into an LRU of four; the two oldest of the batch go. */
    private void putAllStoresOnceIndexesInOrderAndTrims(String url, List<PlainClient> nodes) {
        try (Arena arena = Arena.ofShared(); RemoteStore store = RemoteStore.open(lru(url, 4), FINGERPRINT)) {
            TestBlocks b = new TestBlocks(arena, 17, 4096, 16);
            int n = 6;
            long[] hi = new long[n];
            long[] lo = new long[n];
            MemorySegment[] ids = new MemorySegment[n];
            MemorySegment[] srcs = new MemorySegment[n];
            for (int i = 0; i < n; i++) {
                hi[i] = b.hi(i);
                lo[i] = b.lo(i);
                ids[i] = b.identity(i);
                srcs[i] = b.payload(i);
            }
            assertEquals(n, store.putAll(hi, lo, ids, srcs, n));
            assertEquals(List.of(false, false, true, true, true, true), present(store, b, n),
                    "indexed in batch order, [0] oldest: 0 and 1 evicted");
            assertEquals(4, count(nodes, store), "their values deleted");
            assertEquals(2, store.stats().lruEvicted());
            assertEquals(0, store.putAll(new long[] {hi[5]}, new long[] {lo[5]}, new MemorySegment[] {ids[5]},
                    new MemorySegment[] {srcs[5]}, 1), "write-once: a present key is not stored again");
            assertEquals(1, store.stats().putsPresent());
            MemorySegment dst = b.dst();
            assertTrue(store.get(hi[3], lo[3], ids[3], dst));
            assertTrue(b.holds(dst, 3), "every byte as written");
        }
    }

    private static List<Boolean> present(RemoteStore store, TestBlocks b, int n) {
        List<Boolean> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(store.lookup(new long[] {b.hi(i)}, new long[] {b.lo(i)}, 1) == 1);
        }
        return out;
    }

    @Test
    void clusterBlocksSpreadOverEveryShardAndAreAllFoundAgain() {
        assertEquals(3, clusterNodes.size(), "three masters");
        RemoteOptions options = RemoteOptions.of(cluster.url())
                .withNamespace("spread" + UUID.randomUUID().toString().substring(0, 8))
                .withTimeoutNanos(TimeUnit.SECONDS.toNanos(5));
        try (Arena arena = Arena.ofShared(); RemoteStore store = RemoteStore.open(options, FINGERPRINT)) {
            int n = 90;
            TestBlocks b = new TestBlocks(arena, 5, 16_384, 16);
            for (int i = 0; i < n; i++) {
                assertTrue(store.put(b.hi(i), b.lo(i), b.identity(i), b.payload(i)), "put " + i + " " + store.stats());
            }
            String prefix = RemoteCodec.blockKeyPrefix(options.namespace(), FINGERPRINT);
            long total = 0;
            for (PlainClient node : clusterNodes) {
                long onNode = node.count(prefix);
                assertTrue(onNode >= n / 6, "a shard holds " + onNode + " of " + n + " blocks");
                total += onNode;
            }
            assertEquals(n, total);
            long slot = clusterNodes.getFirst().sync().clusterKeyslot(PlainClient.bytes(store.keyOf(b.hi(0), b.lo(0))));
            assertTrue(slot >= 0 && slot < 16384, "slot " + slot);
            assertEquals(n, store.lookup(b.his(n), b.los(n), n));
            MemorySegment[] ids = new MemorySegment[n];
            MemorySegment[] dsts = new MemorySegment[n];
            for (int i = 0; i < n; i++) {
                ids[i] = b.identity(i);
                dsts[i] = b.dst();
            }
            assertEquals(n, store.getAll(b.his(n), b.los(n), ids, dsts, n));
            for (int i = 0; i < n; i++) {
                assertTrue(b.holds(dsts[i], i), "block " + i);
            }
        }
    }
}
