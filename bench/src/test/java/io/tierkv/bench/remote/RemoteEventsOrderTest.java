package io.tierkv.bench.remote;

import static io.tierkv.core.testing.TestCaches.blockImage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.event.KvBlockHash;
import io.tierkv.core.event.KvMedium;
import io.tierkv.core.testing.TestCaches;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.remote.RemoteEviction;
import io.tierkv.remote.RemoteOptions;
import io.tierkv.remote.RemoteStore;
import io.tierkv.remote.testing.RedisTargets;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.events.KvEvent;
import io.tierkv.tiers.events.KvEventListener;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * REMOTE events as a router's indexer applies them, in order (a set per medium, strict: no store of
 * a held hash, no removal of one not held), against what the store really holds, with the store's
 * owned LRU evicting blocks of the very batch the outbox writes (found by a review: the removals
 * came before the batch's stores, and the indexer kept blocks the store no longer held).
 */
class RemoteEventsOrderTest {

    private static final KvLayout LAYOUT = TestCaches.smallLayout(16);
    private static final int B = LAYOUT.blockSizeTokens();
    private static RedisTargets server;
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

    /** An ordered, strict REMOTE indexer. */
    static final class RemoteIndexer implements KvEventListener {
        final Set<KvBlockHash> held = new LinkedHashSet<>();
        final Set<KvBlockHash> ever = new HashSet<>();
        final List<String> violations = new ArrayList<>();
        long stored;
        long removed;

        @Override
        public synchronized void onBatch(io.tierkv.tiers.events.KvEventBatch batch) {
            for (KvEvent e : batch.events()) {
                if (e instanceof KvEvent.BlockStored s && s.medium() == KvMedium.REMOTE) {
                    stored++;
                    ever.add(s.hash());
                    if (!held.add(s.hash())) {
                        violations.add("stored while held " + s.hash());
                    }
                } else if (e instanceof KvEvent.BlockRemoved r && r.medium() == KvMedium.REMOTE) {
                    removed++;
                    ever.add(r.hash());
                    if (!held.remove(r.hash())) {
                        violations.add("removed while not held " + r.hash());
                    }
                } else if (e instanceof KvEvent.AllBlocksCleared) {
                    held.clear();
                }
            }
        }

        synchronized Set<KvBlockHash> held() {
            return new HashSet<>(held);
        }

        synchronized List<String> violations() {
            return List.copyOf(violations);
        }
    }

    private static RemoteOptions options(long lruCapacity) {
        return RemoteOptions.of(server.url()).withNamespace("order-" + UUID.randomUUID().toString().substring(0, 8))
                .withTimeoutNanos(TimeUnit.SECONDS.toNanos(2)).withEviction(RemoteEviction.LRU)
                .withLruCapacityBlocks(lruCapacity);
    }

    private static KvBlockManager manager(RemoteOptions remote, KvEventListener l) {
        return manager(remote, l, 4);
    }

    private static KvBlockManager manager(RemoteOptions remote, KvEventListener l, int hostBlocks) {
        long bb = LAYOUT.bytesPerBlock();
        return KvBlockManager.builder(LAYOUT).device(new EmulatedDevice(8 * bb + (1 << 20)), 8 * bb)
                .host(hostBlocks * bb).recentDeviceBlocks(0).movers(0).admissionTimeoutNanos(2_000_000).remote(remote)
                .kvEvents(l).build();
    }

    /** Writes prompts from..to-1 (4 blocks each, distinct per base) and pushes them to the store. */
    private void write(KvBlockManager kv, int base, int from, int to) {
        MemorySegment image = arena.allocate(LAYOUT.bytesPerBlock());
        for (int p = from; p < to; p++) {
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                int[] tokens = TestCaches.tokens(base + 10_000 * (p + 1), 4 * B);
                for (int i = 0; i < 4; i++) {
                    s.appendBlock(tokens, i * B, blockImage(image, LAYOUT, 1000L * p + i, i * B));
                }
            }
            kv.demote(Integer.MAX_VALUE);
            kv.evictHost(Integer.MAX_VALUE);
        }
    }

    private static void awaitOutboxEmpty(KvBlockManager kv) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (kv.stats().remote().pushPending() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        Thread.sleep(100);
        while (kv.kvEventStats().orElseThrow().depth() > 0) {
            Thread.sleep(5);
        }
        Thread.sleep(50);
    }

    /** {@return the hashes of {@code candidates} the store holds now} */
    private static Set<KvBlockHash> inStore(RemoteOptions remote, Set<KvBlockHash> candidates) {
        Set<KvBlockHash> out = new HashSet<>();
        try (RemoteStore store = RemoteStore.open(remote, LAYOUT.fingerprint())) {
            for (KvBlockHash h : candidates) {
                if (store.lookup(new long[] {h.hi()}, new long[] {h.lo()}, 1) == 1) {
                    out.add(h);
                }
            }
        }
        return out;
    }

    /**
     * The owned LRU evicts blocks of the very batch being put (capacity below a batch): the
     * removal listener fires inside putAll, before RemotePush reports the batch's stores, so the
     * indexer sees BlockRemoved before BlockStored and keeps a block the store no longer holds.
     */
    @Test
    void remoteEventsInOrderMatchTheStoreWhenTheLruEvictsPartOfABatch() throws Exception {
        RemoteOptions remote = options(2);
        RemoteIndexer idx = new RemoteIndexer();
        try (KvBlockManager kv = manager(remote, idx)) {
            write(kv, 0, 0, 8);
            awaitOutboxEmpty(kv);
            Set<KvBlockHash> truth = inStore(remote, idx.ever);
            System.out.println("remote stored " + idx.stored + " removed " + idx.removed + " store holds "
                    + truth.size() + " indexer holds " + idx.held().size());
            assertEquals(List.of(), idx.violations(), "REMOTE event order");
            assertEquals(truth, idx.held(), "indexer's REMOTE set vs the store's contents");
        }
    }

    /** Same with a roomier LRU (16) and one burst of 32 blocks leaving the host at once. */
    @Test
    void remoteEventsInOrderWhenABurstLargerThanTheLruLeavesTheHost() throws Exception {
        RemoteOptions remote = options(16);
        RemoteIndexer idx = new RemoteIndexer();
        try (KvBlockManager kv = manager(remote, idx, 40)) {
            MemorySegment image = arena.allocate(LAYOUT.bytesPerBlock());
            for (int p = 0; p < 8; p++) {
                try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                    int[] tokens = TestCaches.tokens(10_000 * (p + 1), 4 * B);
                    for (int i = 0; i < 4; i++) {
                        s.appendBlock(tokens, i * B, blockImage(image, LAYOUT, 1000L * p + i, i * B));
                    }
                }
                kv.demote(Integer.MAX_VALUE); // to the host only
            }
            kv.evictHost(Integer.MAX_VALUE); // 32 blocks into the outbox at once
            awaitOutboxEmpty(kv);
            Set<KvBlockHash> truth = inStore(remote, idx.ever);
            System.out.println("burst: stored " + idx.stored + " removed " + idx.removed + " store holds "
                    + truth.size() + " indexer holds " + idx.held().size());
            assertEquals(List.of(), idx.violations(), "REMOTE event order");
            assertEquals(truth, idx.held(), "indexer's REMOTE set vs the store's contents");
        }
    }
}
