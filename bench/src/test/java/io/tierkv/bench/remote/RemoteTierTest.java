package io.tierkv.bench.remote;

import static io.tierkv.core.testing.TestCaches.blockImage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.KvLayout;
import io.tierkv.core.StoreStats;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.core.testing.TestCaches;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.core.event.KvBlockHash;
import io.tierkv.core.event.KvMedium;
import io.tierkv.observe.MetricsEndpoint;
import io.tierkv.observe.TierKvMetrics;
import io.tierkv.remote.RemoteEviction;
import io.tierkv.remote.RemoteOptions;
import io.tierkv.remote.RemoteStore;
import io.tierkv.remote.testing.RedisProcess;
import io.tierkv.remote.testing.RedisTargets;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.TierStats;
import io.tierkv.tiers.events.KvEvent;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The remote store wired under real tier managers ({@code KvBlockManager.builder(...).remote(...)}),
 * against a real server: blocks that leave one manager's lowest local tier are found by another
 * manager's prefix match, byte for byte; a value of another identity under a block's hash is a
 * counted collision and a miss; a paused server costs a match at most its timeout and the local
 * tiers keep serving.
 */
class RemoteTierTest {

    private static final KvLayout LAYOUT = TestCaches.smallLayout(16);
    private static final int B = LAYOUT.blockSizeTokens();
    private static final int PROMPTS = 60;
    private static final int BLOCKS_PER_PROMPT = 4;

    private static RedisTargets server;

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofAuto();

    @BeforeAll
    static void start() throws Exception {
        server = RedisTargets.standalone();
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private static String scrape(int port) throws java.io.IOException {
        var c = (java.net.HttpURLConnection) java.net.URI.create("http://127.0.0.1:" + port + "/metrics").toURL()
                .openConnection();
        assertEquals(200, c.getResponseCode());
        try (var in = c.getInputStream()) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    /** {@return the value of the one sample of {@code name} whose labels contain {@code label} (any, if null)} */
    private static double scraped(String text, String name, String label) {
        Double found = null;
        for (String line : text.split("\n")) {
            if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
                String labels = line.startsWith(name + "{") ? line.substring(name.length(), line.indexOf('}') + 1) : "";
                if (label == null || labels.contains(label)) {
                    assertEquals(null, found, "one sample of " + name + " " + label);
                    found = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                }
            }
        }
        assertTrue(found != null, "no sample of " + name + " " + label);
        return found;
    }

    /** A namespace of its own per test, so tests sharing the server never see each other's blocks. */
    private static RemoteOptions options(String url) {
        return RemoteOptions.of(url).withNamespace("tier-" + UUID.randomUUID().toString().substring(0, 8))
                .withTimeoutNanos(TimeUnit.SECONDS.toNanos(2)); // a first call on a cold JVM and 2 busy cores
    }

    private static KvBlockManager manager(RemoteOptions remote, DiskOptions disk, int hostBlocks) {
        return manager(remote, disk, hostBlocks, false);
    }

    private static KvBlockManager manager(RemoteOptions remote, DiskOptions disk, int hostBlocks,
            boolean writeThrough) {
        long bb = LAYOUT.bytesPerBlock();
        var b = KvBlockManager.builder(LAYOUT).device(new EmulatedDevice(8 * bb + (1 << 20)), 8 * bb)
                .host(hostBlocks * bb).recentDeviceBlocks(0).movers(0).admissionTimeoutNanos(2_000_000)
                .remote(remote).remoteWriteThrough(writeThrough);
        if (disk != null) {
            b.disk(disk);
        }
        return b.build();
    }

    private DiskOptions smallDisk(String name) {
        return DiskOptions.at(dir.resolve(name)).withSegmentBytes(64 << 10).withBudgetBytes(192 << 10)
                .withCompression(Compression.NONE);
    }

    private static int[] prompt(int p) {
        return TestCaches.tokens(10_000 * (p + 1), BLOCKS_PER_PROMPT * B);
    }

    /**
     * Writes every prompt's blocks (content keyed by prompt and block), pushing each prompt's
     * blocks all the way down after it.
     *
     * @return per prompt, its blocks' hashes: {@code [p][0]} high words, {@code [p][1]} low words
     */
    private long[][][] writeAll(KvBlockManager kv) {
        return write(kv, 0, PROMPTS, true);
    }

    private long[][][] write(KvBlockManager kv, int from, int to) {
        return write(kv, from, to, true);
    }

    /** {@link #writeAll} for prompts {@code from..to-1}; demoted only (left on the host) unless {@code evictHost}. */
    private long[][][] write(KvBlockManager kv, int from, int to, boolean evictHost) {
        MemorySegment image = arena.allocate(LAYOUT.bytesPerBlock());
        long[][][] hashes = new long[PROMPTS][2][BLOCKS_PER_PROMPT];
        for (int p = from; p < to; p++) {
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                int[] tokens = prompt(p);
                for (int i = 0; i < BLOCKS_PER_PROMPT; i++) {
                    s.appendBlock(tokens, i * B, blockImage(image, LAYOUT, key(p, i), i * B));
                    long[] h = kv.diagnostics().blockHash(s.blockId(i));
                    hashes[p][0][i] = h[0];
                    hashes[p][1][i] = h[1];
                }
            }
            kv.demote(Integer.MAX_VALUE);
            if (evictHost) {
                kv.evictHost(Integer.MAX_VALUE);
            }
        }
        return hashes;
    }

    /** {@return the blocks a fresh manager can match from the store: each prompt's leading run held there} */
    private static int leadingInStore(RemoteOptions remote, long[][][] hashes) {
        int total = 0;
        try (RemoteStore store = RemoteStore.open(remote, LAYOUT.fingerprint())) {
            for (long[][] h : hashes) {
                total += store.lookup(h[0], h[1], BLOCKS_PER_PROMPT);
            }
        }
        return total;
    }

    private static long key(int p, int i) {
        return 1_000L * p + i;
    }

    private static void awaitOutboxEmpty(KvBlockManager kv) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (kv.stats().remote().pushPending() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(0, kv.stats().remote().pushPending(), "outbox drained");
    }

    /**
     * Matches every prompt in {@code kv}, checks every matched block's bytes (read through a lease,
     * after promotion), and returns the blocks matched.
     */
    private int matchAndVerifyAll(KvBlockManager kv) {
        return matchAndVerify(kv, 0, PROMPTS);
    }

    /** {@link #matchAndVerifyAll} for prompts {@code from..to-1}. */
    private int matchAndVerify(KvBlockManager kv, int from, int to) {
        MemorySegment expected = arena.allocate(LAYOUT.bytesPerBlock());
        MemorySegment out = arena.allocate(LAYOUT.bytesPerBlock());
        int matched = 0;
        for (int p = from; p < to; p++) {
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                int tokens = s.matchPrefix(prompt(p));
                assertEquals(0, tokens % B);
                for (int i = 0; i < tokens / B; i++) {
                    out.fill((byte) 0);
                    s.readBlock(i, out);
                    assertEquals(-1, out.mismatch(blockImage(expected, LAYOUT, key(p, i), i * B)),
                            "prompt " + p + " block " + i + ": the bytes written in the other manager");
                    try (var lease = s.lease(i * B, (i + 1) * B)) {
                        assertTrue(kv.diagnostics().isOnDevice(s.blockId(i)), "a lease promotes it");
                        assertEquals(-1, lease.block(0).mismatch(expected), "the device copy too");
                    }
                }
                matched += tokens / B;
            }
        }
        return matched;
    }

    @Test
    void blocksTheDiskEvictsReachTheStoreAndAnotherManagersMatchFindsThemByteForByte() throws Exception {
        RemoteOptions remote = options(server.url());
        int findable;
        try (KvBlockManager a = manager(remote, smallDisk("a"), 4)) {
            long[][][] hashes = writeAll(a);
            awaitOutboxEmpty(a);
            TierStats.RemoteTierStats st = a.stats().remote();
            long diskEvicted = a.stats().disk().evictions();
            assertTrue(diskEvicted >= PROMPTS * BLOCKS_PER_PROMPT / 2,
                    "the disk budget evicted most blocks: " + diskEvicted);
            assertEquals(diskEvicted, st.pushOffered(), "every verified evicted record is offered");
            assertEquals(0, st.pushDropped(), "the outbox had room");
            assertEquals(diskEvicted, st.store().puts() + st.store().putsPresent() + st.store().putsDropped(),
                    "and answered: " + st);
            assertEquals(0, st.store().putsDropped(), st.toString());
            assertEquals(0, st.fetched(), "a matched nothing");
            findable = leadingInStore(remote, hashes);
            assertTrue(findable >= st.store().puts() - PROMPTS, "most stored blocks lead a chain: " + findable);
            try (MetricsEndpoint metrics = new MetricsEndpoint(new TierKvMetrics(a::stats, a::kvEventStats), 0)) {
                String text = scrape(metrics.port());
                assertEquals(st.pushOffered(), scraped(text, "tierkv_remote_blocks_total", "step=\"offered\""), text);
                assertEquals(st.store().puts(), scraped(text, "tierkv_remote_blocks_total", "step=\"sent\""), text);
                assertEquals(0.0, scraped(text, "tierkv_remote_dropped_blocks_total", "cause=\"store\""), text);
                assertEquals(0.0, scraped(text, "tierkv_remote_breaker_open", null), text);
            }
        }
        try (KvBlockManager b = manager(remote, smallDisk("b"), 4)) {
            int matched = matchAndVerifyAll(b);
            TierStats.RemoteTierStats st = b.stats().remote();
            assertEquals(findable, matched, "every block the store holds at the head of a chain is found");
            assertEquals(matched, st.adopted(), "b's tiers started empty: every match came from the store");
            assertEquals(st.store().hits(), st.fetched());
            assertTrue(b.checkInvariants().isEmpty(), b.checkInvariants().toString());
            try (MetricsEndpoint metrics = new MetricsEndpoint(new TierKvMetrics(b::stats, b::kvEventStats), 0)) {
                String text = scrape(metrics.port()); // a live store's figures, not the zeros of a manager without one
                assertTrue(st.fetched() > 0, st.toString());
                assertEquals(st.fetched(), scraped(text, "tierkv_remote_blocks_total", "step=\"fetched\""), text);
                assertEquals(st.adopted(), scraped(text, "tierkv_remote_blocks_total", "step=\"adopted\""), text);
                assertEquals(st.store().lookupHits(), scraped(text, "tierkv_remote_lookup_blocks_total", "result=\"hit\""),
                        text);
                assertEquals(0.0, scraped(text, "tierkv_remote_failures_total", "kind=\"collision\""), text);
            }
        }
    }

    @Test
    void withoutADiskTheHostBlocksFreedForRoomReachTheStore() throws Exception {
        RemoteOptions remote = options(server.url());
        long pushed;
        int findable;
        try (KvBlockManager a = manager(remote, null, 4)) {
            long[][][] hashes = writeAll(a);
            awaitOutboxEmpty(a);
            TierStats.RemoteTierStats st = a.stats().remote();
            assertTrue(st.pushOffered() >= PROMPTS * BLOCKS_PER_PROMPT - 4, "freed host blocks offered: " + st);
            pushed = st.store().puts();
            assertEquals(0, st.pushDropped(), st.toString());
            assertEquals(st.pushOffered(), pushed + st.store().putsPresent() + st.store().putsDropped(), st.toString());
            assertTrue(pushed >= PROMPTS * BLOCKS_PER_PROMPT / 2, st.toString());
            findable = leadingInStore(remote, hashes);
        }
        try (KvBlockManager b = manager(remote, null, 8)) {
            int matched = matchAndVerifyAll(b);
            assertEquals(findable, matched, "every block the store holds at the head of a chain is found");
            assertEquals(matched, b.stats().remote().adopted());
        }
    }

    @Test
    void aStoredValueOfAnotherIdentityUnderABlocksHashIsACountedCollisionAndAMiss() throws Exception {
        RemoteOptions remote = options(server.url());
        int[] tokens = prompt(7);
        long hi;
        long lo;
        try (KvBlockManager probe = manager(remote, null, 4); Sequence s = probe.openSequence(SequenceOptions.defaults())) {
            s.appendBlock(tokens, 0, blockImage(arena.allocate(LAYOUT.bytesPerBlock()), LAYOUT, 1, 0));
            long[] h = probe.diagnostics().blockHash(s.blockId(0));
            hi = h[0];
            lo = h[1];
        } // closed without pressure: nothing was sent
        MemorySegment foreign = arena.allocate(BlockIdentity.bytes(B), 8);
        BlockIdentity.writeKey(foreign, 0, 1, 2, 0, 0);
        foreign.asSlice(BlockIdentity.KEY_BYTES).copyFrom(MemorySegment.ofArray(tokens).asSlice(0, 4L * B));
        foreign.set(ValueLayout.JAVA_INT, BlockIdentity.KEY_BYTES, 99); // another first token
        try (RemoteStore store = RemoteStore.open(remote, LAYOUT.fingerprint())) {
            assertTrue(store.put(hi, lo, foreign, arena.allocate(LAYOUT.bytesPerBlock()).fill((byte) 0x5A)));
        }
        try (KvBlockManager b = manager(remote, null, 4); Sequence s = b.openSequence(SequenceOptions.defaults())) {
            assertEquals(0, s.matchPrefix(tokens), "the hash alone never proves the block");
            StoreStats st = b.stats().remote().store();
            assertEquals(1, st.collisions(), st.toString());
            assertEquals(0, st.hits());
            assertEquals(0, b.stats().remote().adopted());
        }
    }

    @Test
    void aPausedServerCostsAMatchAtMostItsTimeoutAndTheLocalTiersKeepServing() throws Exception {
        try (RedisProcess own = RedisTargets.ownStandalone()) {
            long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(80);
            RemoteOptions remote = options(own.url()).withTimeoutNanos(timeoutNanos).withBreakerFailures(2);
            try (KvBlockManager kv = manager(remote, smallDisk("p"), 4)) {
                MemorySegment image = arena.allocate(LAYOUT.bytesPerBlock());
                MemorySegment out = arena.allocate(LAYOUT.bytesPerBlock());
                try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                    s.appendBlock(prompt(0), 0, blockImage(image, LAYOUT, 42, 0));
                }
                own.pause();
                try {
                    long slowest = 0;
                    for (int round = 0; round < 6; round++) {
                        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                            long t0 = System.nanoTime();
                            assertEquals(B, s.matchPrefix(prompt(0)), "the local block, then a remote miss");
                            slowest = Math.max(slowest, System.nanoTime() - t0);
                            s.readBlock(0, out);
                            assertEquals(-1, out.mismatch(blockImage(image, LAYOUT, 42, 0)));
                        }
                        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                            assertEquals(0, s.matchPrefix(prompt(round + 1)), "nothing local, nothing remote");
                        }
                    }
                    StoreStats st = kv.stats().remote().store();
                    assertTrue(st.timeouts() >= 2, st.toString());
                    assertEquals("OPEN", st.breakerState(), st.toString());
                    // one lookup of at most one timeout, plus scheduling slack on 2 shared cores
                    assertTrue(slowest < timeoutNanos + TimeUnit.MILLISECONDS.toNanos(700),
                            "slowest match " + slowest / 1_000_000 + " ms");
                } finally {
                    own.resume();
                }
                assertFalse(kv.checkInvariants().iterator().hasNext(), kv.checkInvariants().toString());
            }
        }
    }

    /**
     * A server that answers every command, only slowly (a proxy holds each request 150 ms; the
     * store's timeout is 200 ms), so that every call alone ends within its timeout. A match makes
     * a lookup and a read per round, and one block per round here (a host of 4 blocks fetches a
     * quarter of it at a time): with a timeout per call, a 4-block match waited 2 calls x 4 rounds
     * x 150 ms (found by a review). All the calls of one match share one timeout from its start:
     * the match's first lookup takes 150 ms, its read is cut at the deadline and times out, and the
     * match misses having waited its timeout.
     */
    @Test
    void aSlowServerCostsAMatchItsTimeoutOverAllItsCallsTogether() throws Exception {
        RemoteOptions remote = options(server.url());
        int prompts = 4;
        try (KvBlockManager a = manager(remote, null, 4)) {
            write(a, 0, prompts);
            awaitOutboxEmpty(a);
        }
        long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(200);
        try (SlowProxy proxy = new SlowProxy(server.url(), 150);
                KvBlockManager b = manager(remote.withUrl(proxy.url()).withTimeoutNanos(timeoutNanos)
                        .withBreakerFailures(100), null, 4)) {
            long slowest = 0;
            for (int p = 0; p < prompts; p++) {
                try (Sequence s = b.openSequence(SequenceOptions.defaults())) {
                    long t0 = System.nanoTime();
                    assertEquals(0, s.matchPrefix(prompt(p)), "nothing arrives within the match's timeout");
                    slowest = Math.max(slowest, System.nanoTime() - t0);
                }
            }
            StoreStats st = b.stats().remote().store();
            assertEquals(prompts, st.lookups(), "one lookup per match: " + st);
            assertTrue(st.timeouts() >= prompts, "each match's read timed out: " + st);
            // one timeout, plus scheduling slack on 2 shared cores (before: 1,200 ms or more)
            assertTrue(slowest < timeoutNanos + TimeUnit.MILLISECONDS.toNanos(500),
                    "slowest match " + slowest / 1_000_000 + " ms");
        }
        try (KvBlockManager c = manager(remote, null, 4)) {
            assertEquals(prompts * BLOCKS_PER_PROMPT, matchAndVerify(c, 0, prompts), "the store holds them all");
        }
    }

    @Test
    void aServerKilledAndRestartedMidRunCostsMissesAndDroppedWritesOnlyAndNoWrongByte() throws Exception {
        try (RedisProcess own = RedisTargets.ownStandalone()) {
            RemoteOptions remote = options(own.url()).withTimeoutNanos(TimeUnit.MILLISECONDS.toNanos(200))
                    .withBreakerFailures(2).withBreakerOpenNanos(TimeUnit.MILLISECONDS.toNanos(100))
                    .withReconnectMaxDelayNanos(TimeUnit.MILLISECONDS.toNanos(100));
            try (KvBlockManager kv = manager(remote, smallDisk("k"), 4)) {
                write(kv, 0, 20);
                awaitOutboxEmpty(kv);
                long before = kv.stats().remote().store().puts();
                assertTrue(before > 0, kv.stats().remote().toString());
                own.kill();
                write(kv, 20, 40); // evictions meanwhile: offered, and dropped by the store
                awaitOutboxEmpty(kv);
                int local = matchAndVerify(kv, 0, 40); // every byte served is the block's own
                StoreStats dead = kv.stats().remote().store();
                assertEquals(before, dead.puts(), "nothing stored while the server was dead: " + dead);
                assertTrue(dead.putsDropped() > 0, dead.toString());
                assertTrue(dead.errors() + dead.timeouts() > 0, dead.toString());
                assertTrue(local > 0, "the local tiers kept serving");
                own.restart();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                int round = 40;
                while (kv.stats().remote().store().puts() == before && System.nanoTime() < deadline
                        && round < PROMPTS) {
                    write(kv, round, round + 1); // pushes resume once the client has reconnected
                    awaitOutboxEmpty(kv);
                    round++;
                    Thread.sleep(50);
                }
                assertTrue(kv.stats().remote().store().puts() > before, "stores again after the restart: "
                        + kv.stats().remote());
                matchAndVerify(kv, 0, round);
                assertTrue(kv.checkInvariants().isEmpty(), kv.checkInvariants().toString());
            }
        }
    }

    @Test
    void withWriteThroughEveryDemotedBlockReachesTheStoreWhileTheHostStillHoldsIt() throws Exception {
        RemoteOptions remote = options(server.url());
        int prompts = 10;
        long[][][] hashes;
        try (KvBlockManager a = manager(remote, null, prompts * BLOCKS_PER_PROMPT, true)) {
            hashes = write(a, 0, prompts, false); // host room for all: nothing leaves the host
            awaitOutboxEmpty(a);
            TierStats st = a.stats();
            assertEquals(0, st.hostEvictions(), "no block left the lowest local tier");
            assertEquals(prompts * BLOCKS_PER_PROMPT, st.remote().pushOffered(), st.remote().toString());
            assertEquals(prompts * BLOCKS_PER_PROMPT, st.remote().store().puts(), st.remote().toString());
        }
        assertEquals(prompts * BLOCKS_PER_PROMPT, leadingInStore(remote, hashes));
        try (KvBlockManager b = manager(remote, null, 8)) {
            assertEquals(prompts * BLOCKS_PER_PROMPT, matchAndVerify(b, 0, prompts));
        }
    }

    @Test
    void theStoresContentsAreKvEventsWithMediumRemoteStoredWhenSentAndRemovedWhenItsLruEvicts() throws Exception {
        int capacity = 40; // blocks the owned LRU keeps: most of what the run sends is evicted again
        RemoteOptions remote = options(server.url()).withEviction(RemoteEviction.LRU).withLruCapacityBlocks(capacity);
        java.util.Map<KvBlockHash, Integer> held = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.concurrent.atomic.AtomicLong stored = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong removed = new java.util.concurrent.atomic.AtomicLong();
        long bb = LAYOUT.bytesPerBlock();
        TierStats.RemoteTierStats st;
        try (KvBlockManager a = KvBlockManager.builder(LAYOUT).device(new EmulatedDevice(8 * bb + (1 << 20)), 8 * bb)
                .host(4 * bb).recentDeviceBlocks(0).movers(0).admissionTimeoutNanos(2_000_000).remote(remote)
                .kvEvents(batch -> batch.events().forEach(e -> {
                    if (e instanceof KvEvent.BlockStored s && s.medium() == KvMedium.REMOTE) {
                        stored.incrementAndGet();
                        held.merge(s.hash(), 1, Integer::sum);
                    } else if (e instanceof KvEvent.BlockRemoved r && r.medium() == KvMedium.REMOTE) {
                        removed.incrementAndGet();
                        held.merge(r.hash(), -1, Integer::sum);
                    }
                })).build()) {
            writeAll(a);
            awaitOutboxEmpty(a);
            st = a.stats().remote();
        } // close drains the event queue
        assertTrue(st.store().puts() > capacity, st.toString());
        assertEquals(st.store().puts(), stored.get(), "one REMOTE BlockStored per block the store accepted");
        assertEquals(st.store().puts() - capacity, removed.get(), "one BlockRemoved per block the LRU evicted");
        held.values().removeIf(n -> n == 0);
        assertEquals(capacity, held.size(), "the events' view holds what the LRU keeps");
        assertTrue(held.values().stream().allMatch(n -> n == 1), held.toString());
        try (RemoteStore store = RemoteStore.open(remote, LAYOUT.fingerprint())) {
            for (KvBlockHash h : held.keySet()) {
                assertEquals(1, store.lookup(new long[] {h.hi()}, new long[] {h.lo()}, 1), "held by the store: " + h);
            }
        }
    }
}
