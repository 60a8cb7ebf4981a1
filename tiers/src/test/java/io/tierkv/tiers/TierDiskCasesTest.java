package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.firstMismatch;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.DiskStats;
import io.tierkv.tiers.disk.store.DiskFormat;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Fault cases across device, host and disk. */
class TierDiskCasesTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @TempDir
    Path dir;

    private DiskOptions disk() {
        return DiskOptions.at(dir.resolve("kv")).withSegmentBytes(64 << 10).withBudgetBytes(1 << 20)
                .withCompression(Compression.LZ4);
    }

    private static void touch(PagedKvCache cache, int blockId) {
        cache.acquireLease(blockId);
        cache.releaseLease(blockId);
    }

    private static int cached(KvBlockManager kv, long key, int firstToken) {
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, key, tokens(firstToken, 16));
            return s.blockId(0);
        }
    }

    @Test
    void case14_cleanCopiesStayEvictable() {
        KvBlockManager kv = Managers.build(invariants, 8, 4, disk());
        PagedKvCache cache = kv.cache();
        int[] far = new int[4];
        for (int i = 0; i < 4; i++) { // four blocks that will live on disk
            far[i] = cached(kv, 900 + i, 90_000 + 100 * i);
            assertTrue(cache.tierControl().demoteBlock(far[i]));
        }
        assertEquals(4, kv.evictHost(4), "spilled to disk");
        assertEquals(4, kv.stats().diskSpills().blocks());
        int[] near = new int[8];
        for (int i = 0; i < 8; i++) {
            near[i] = cached(kv, i, 100 * i);
        }
        for (int i = 0; i < 4; i++) { // demote and promote back: the host keeps 4 clean copies
            assertTrue(cache.tierControl().demoteBlock(near[i]));
            touch(cache, near[i]);
        }
        assertEquals(4, kv.stats().hostUsedBlocks());
        assertEquals(8, cache.diagnostics().deviceUsedBlocks());
        for (int i = 0; i < 4; i++) { // load the disk blocks; device room comes through the host
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                assertEquals(16, s.matchPrefix(tokens(90_000 + 100 * i, 16)));
                assertEquals(-1, firstMismatch(s, 900 + i, 0, 16), "load " + i);
            }
        }
        assertEquals(0, kv.stats().hostAllocationFailures());
        assertEquals(4, kv.stats().diskLoads().blocks());
    }

    @Test
    void case20_countersCountWhatMoved() {
        KvBlockManager kv = Managers.build(invariants, 2, 4, disk());
        PagedKvCache cache = kv.cache();
        long bb = kv.layout().bytesPerBlock();
        int a = cached(kv, 1, 0);
        int b = cached(kv, 2, 100);
        assertTrue(cache.tierControl().demoteBlock(a));
        assertTrue(cache.tierControl().demoteBlock(b));
        int c = cached(kv, 3, 200);
        assertTrue(cache.tierControl().demoteBlock(c));
        touch(cache, a);
        touch(cache, b);
        assertEquals(1, kv.evictHost(1), "C, the only host block without a device copy, spills");
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(16, s.matchPrefix(tokens(200, 16)));
            assertEquals(-1, firstMismatch(s, 3, 0, 16), "loaded back and promoted");
        }
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(0, s.matchPrefix(tokens(7777, 16)));
        }
        TierStats st = kv.stats();
        assertEquals(3, st.demotions().blocks());
        assertEquals(3 * bb, st.demotions().bytes());
        assertEquals(3, st.promotions().blocks());
        assertEquals(3 * bb, st.promotions().bytes());
        assertEquals(1, st.diskSpills().blocks());
        // The match adopts the record into a free host slot (one verified disk read), so the
        // lease's promotion is a host copy: the load is disk -> host, the promotion host -> device.
        assertEquals(1, st.diskToHost().blocks(), "loaded once");
        assertEquals(0, st.diskLoads().blocks(), "never read from disk a second time");
        assertEquals(bb, st.diskSpills().bytes(), "raw block bytes spilled");
        assertEquals(bb, st.diskToHost().bytes(), "raw block bytes loaded");
        DiskStats d = st.disk();
        assertEquals(1, d.puts());
        assertEquals(1, d.hits());
        assertEquals(0, d.misses());
        assertEquals(bb, d.rawBytesWritten());
        assertEquals(bb, d.rawBytesRead());
        assertTrue(d.bytesWritten() > 0 && d.bytesWritten() <= bb, "stored payload " + d.bytesWritten());
        assertEquals(d.bytesWritten(), d.bytesRead(), "the one record was read back whole, at its stored size");
        long record = DiskFormat.RECORD_HEADER_BYTES + BlockIdentity.bytes(16) + d.bytesWritten();
        long aligned = (record + DiskFormat.RECORD_ALIGN_BYTES - 1) / DiskFormat.RECORD_ALIGN_BYTES
                * DiskFormat.RECORD_ALIGN_BYTES;
        assertEquals(aligned, d.recordBytesWritten(), "header + identity + stored payload, 64-byte aligned");
        assertEquals(d.recordBytesWritten(), d.liveBytes(), "the record is still on disk (clean copy)");
        assertEquals(1, st.cache().prefixHitBlocks());
        assertEquals(1, st.cache().prefixHitBlocksBelow());
        assertEquals(1, st.cache().prefixMissBlocks());
        assertEquals(0, st.diskMisses());
    }

    @Test
    void diskRecordsServePrefixHitsAfterTheirBlockIdsAreGone() {
        KvBlockManager kv = Managers.build(invariants, 2, 2, disk());
        List<int[]> prompts = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int id = cached(kv, 40 + i, 1000 * i);
            prompts.add(tokens(1000 * i, 16));
            kv.cache().tierControl().demoteBlock(id);
            kv.evictHost(2);
        }
        kv.runMoverCycle();
        for (int i = 0; i < 6; i++) {
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                assertEquals(16, s.matchPrefix(prompts.get(i)), "prompt " + i);
                assertEquals(-1, firstMismatch(s, 40 + i, 0, 16));
            }
        }
    }

    @Test
    void blockIdsOfSpilledUnreferencedBlocksAreRetiredSoIdsNeverRunOut() {
        KvBlockManager kv = Managers.build(invariants, 2, 2, disk()); // ids: 2 + 2 + about 513
        for (int i = 0; i < 2_000; i++) { // far more distinct blocks than ids; the disk evicts old ones
            cached(kv, i, 16 * i);
            kv.runMoverCycle();
            kv.evictHost(1);
        }
        TierStats st = kv.stats();
        assertTrue(st.cache().retiredIds() > 1_000, "retired " + st.cache().retiredIds());
        assertTrue(st.cache().liveBlocks() <= 8, "live ids " + st.cache().liveBlocks());
        assertTrue(st.disk().evictions() > 0, "the disk budget forced evictions");
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(16, s.matchPrefix(tokens(16 * 1_999, 16)), "a recent block is found again by hash");
            assertEquals(-1, firstMismatch(s, 1_999, 0, 16));
        }
    }
}
