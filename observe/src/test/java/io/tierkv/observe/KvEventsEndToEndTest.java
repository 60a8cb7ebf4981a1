package io.tierkv.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.event.KvBlockHash;
import io.tierkv.core.event.KvMedium;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.TierStats;
import io.tierkv.tiers.events.KvEventStats;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** KV events over a real ZeroMQ SUB socket on loopback: an indexer built from them alone equals the manager. */
class KvEventsEndToEndTest {

    @TempDir
    Path dir;

    @Test
    void indexerBuiltFromEventsEqualsTheManagersViewAcrossEvictionSpillsAndARestart() throws Exception {
        try (EventIndexer indexer = new EventIndexer();
             ZmqKvEventPublisher publisher = new ZmqKvEventPublisher(indexer.endpoint(), "", 3, 5_000)) {
            Path disk = dir.resolve("kv");
            Map<String, Set<Long>> recoveredOnDisk;
            try (KvBlockManager kv = Workload.manager(KvBlockManager.builder(Workload.LAYOUT).kvEvents(publisher), disk)) {
                Workload.run(kv, 7, 300);
                TierStats s = kv.stats();
                assertTrue(s.demotions().blocks() > 0, "demotions " + s.demotions());
                assertTrue(s.diskSpills().blocks() > 0, "spills " + s.diskSpills());
                assertTrue(s.cache().evictions() + s.hostEvictions() + s.disk().evictions() > 0, "evictions");
                awaitDelivered(indexer, publisher, kv);
                Map<String, Set<Long>> view = managerView(kv);
                assertEquals(Set.of("GPU", "CPU", "DISK"), indexer.mediaSeen(), "blocks stored in every tier");
                assertTrue(view.containsKey("CPU") && view.containsKey("DISK"), "findable at the end: " + view.keySet());
                assertEquals(view, indexer.byMedium());
                recoveredOnDisk = Map.of("DISK", wire(kv.diagnostics().findableHashes(KvMedium.DISK)));
                assertTrue(!recoveredOnDisk.get("DISK").isEmpty(), "records on disk at close");
            }
            awaitSent(indexer, publisher);
            synchronized (indexer) {
                assertEquals(1, indexer.clears, "AllBlocksCleared at close");
            }
            assertEquals(Map.of(), indexer.byMedium());

            try (KvBlockManager kv = Workload.manager(KvBlockManager.builder(Workload.LAYOUT).kvEvents(publisher), disk)) {
                awaitDelivered(indexer, publisher, kv);
                assertEquals(recoveredOnDisk, indexer.byMedium(), "recovered records announced as BlockStored DISK");
                long matched = Workload.run(kv, 8, 200);
                assertTrue(kv.stats().disk().recoveredBlocks() > 0, "recovered " + kv.stats().disk());
                assertTrue(matched > 0, "prefix hits after the restart");
                awaitDelivered(indexer, publisher, kv);
                assertEquals(managerView(kv), indexer.byMedium());
                KvEventStats es = kv.kvEventStats().orElseThrow();
                assertEquals(0, es.dropped());
            }
            awaitSent(indexer, publisher);
            List<Long> sequences = indexer.sequences();
            for (int i = 0; i < sequences.size(); i++) {
                assertEquals(i, sequences.get(i), "no gap without drops");
            }
            synchronized (indexer) {
                assertEquals(3, indexer.lastRank);
                assertEquals(Workload.LAYOUT.blockSizeTokens(), indexer.lastBlockSize);
                assertTrue(indexer.storedEvents > 100 && indexer.removedEvents > 50,
                        "stored " + indexer.storedEvents + " removed " + indexer.removedEvents);
            }
        }
    }

    /** The manager's own view: medium -> 64-bit wire hashes findable there. */
    static Map<String, Set<Long>> managerView(KvBlockManager kv) {
        Map<String, Set<Long>> out = new HashMap<>();
        for (KvMedium m : KvMedium.values()) {
            Set<Long> hashes = wire(kv.diagnostics().findableHashes(m));
            if (!hashes.isEmpty()) {
                out.put(m.name(), hashes);
            }
        }
        return out;
    }

    static Set<Long> wire(List<KvBlockHash> hashes) {
        Set<Long> out = new HashSet<>();
        hashes.forEach(h -> out.add(h.wireHash()));
        return out;
    }

    /** Waits until the manager's queue is empty and every batch it delivered was received. */
    private static void awaitDelivered(EventIndexer indexer, ZmqKvEventPublisher publisher, KvBlockManager kv)
            throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        int stable = 0;
        while (stable < 3) {
            KvEventStats s = kv.kvEventStats().orElseThrow();
            boolean settled = s.depth() == 0 && indexer.batchCount() == publisher.sentBatches();
            stable = settled ? stable + 1 : 0;
            if (System.nanoTime() > deadline) {
                throw new AssertionError("events not delivered: " + s + ", received " + indexer.batchCount()
                        + " of " + publisher.sentBatches());
            }
            Thread.sleep(30);
        }
    }

    /** Waits until every batch the publisher sent was received (after a manager closed). */
    static void awaitSent(EventIndexer indexer, ZmqKvEventPublisher publisher) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (indexer.batchCount() < publisher.sentBatches()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("received " + indexer.batchCount() + " of " + publisher.sentBatches());
            }
            Thread.sleep(10);
        }
    }
}
