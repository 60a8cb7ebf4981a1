package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.store.DiskFormat;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sequence whose blocks live only on disk keeps them there while it is open, however many new
 * spills want the room: the disk refuses those spills instead, and nothing is lost below.
 */
class ReferencedBlocksOnDiskTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @TempDir
    Path dir;

    private static final long RECORD = DiskFormat.recordBytes(16, Managers.LAYOUT.bytesPerBlock());
    /** One segment holding a handful of raw records; the budget allows no second one. */
    private static final long SEGMENT = (DiskFormat.SEGMENT_HEADER_BYTES + 4 * RECORD + 4095) / 4096 * 4096;
    /** Records that fit the one segment. */
    private static final int RECORDS = (int) ((SEGMENT - DiskFormat.SEGMENT_HEADER_BYTES) / RECORD);

    private KvBlockManager manager() {
        return Managers.build(invariants, 2, 2, DiskOptions.at(dir.resolve("kv")).withSegmentBytes(SEGMENT)
                .withBudgetBytes(SEGMENT + 4096).withCompression(Compression.NONE).withLowSpaceWarnBytes(0));
    }

    /** A closed sequence's one block, demoted and offered to the disk; returns whether anything spilled. */
    private static boolean spillCached(KvBlockManager kv, long key, int firstToken) {
        long spillsBefore = kv.stats().diskSpills().blocks();
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, key, tokens(firstToken, 16));
            assertTrue(kv.cache().tierControl().demoteBlock(s.blockId(0)));
        }
        kv.evictHost(2);
        kv.runMoverCycle();
        return kv.stats().diskSpills().blocks() > spillsBefore;
    }

    /** Moves every block of a sequence off the device and the host, onto disk. */
    private static void pushToDisk(KvBlockManager kv, Sequence seq, int blocks) {
        PagedKvCache cache = kv.cache();
        for (int i = 0; i < blocks; i++) {
            int id = seq.blockId(i);
            if (cache.diagnostics().isOnDevice(id)) {
                assertTrue(cache.tierControl().demoteBlock(id), "demote block " + i);
            }
            kv.evictHost(2);
        }
        assertEquals(0, kv.stats().hostUsedBlocks());
    }

    private static void assertBlocksReadBack(KvBlockManager kv, Sequence seq, long key, int blocks) {
        long bb = kv.layout().bytesPerBlock();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(bb);
            MemorySegment expected = arena.allocate(bb);
            for (int i = 0; i < blocks; i++) {
                out.fill((byte) 0x5A);
                seq.readBlock(i, out);
                blockImage(expected, kv.layout(), key, 16 * i);
                assertEquals(-1, out.mismatch(expected), "block " + i + " bytes");
            }
        }
    }

    @Test
    void aSequenceKeepsItsDiskOnlyBlocksWhileNewSpillsAreRefused() {
        assertTrue(RECORDS >= 4, "records per segment " + RECORDS);
        KvBlockManager kv = manager();
        Sequence seq = kv.openSequence(SequenceOptions.defaults());
        appendWritten(seq, 7, tokens(0, 16 * RECORDS));
        pushToDisk(kv, seq, RECORDS);
        TierStats st = kv.stats();
        assertEquals(RECORDS, st.disk().blockCount());
        assertEquals(RECORDS, st.disk().pinnedBlocks(), "every referenced disk-only block is pinned");
        for (int i = 0; i < RECORDS; i++) {
            assertFalse(kv.cache().diagnostics().isOnDevice(seq.blockId(i)));
        }

        for (int j = 0; j < 3 * RECORDS; j++) { // the disk is full of pinned records: every spill is refused
            assertFalse(spillCached(kv, 100 + j, 10_000 + 100 * j), "spill " + j);
        }
        st = kv.stats();
        assertEquals(3 * RECORDS, st.diskSpillFailures());
        assertEquals(3 * RECORDS, st.disk().pinRefusals());
        assertEquals(0, st.disk().evictions());
        assertEquals(RECORDS, st.disk().blockCount());

        try (Sequence other = kv.openSequence(SequenceOptions.defaults())) { // a referenced block stays on the host
            appendWritten(other, 8, tokens(50_000, 16));
            assertTrue(kv.cache().tierControl().demoteBlock(other.blockId(0)));
            assertEquals(0, kv.evictHost(2), "its spill is refused and it may not be freed");
            assertEquals(1, kv.stats().hostUsedBlocks());
            assertBlocksReadBack(kv, other, 8, 1);
        }

        assertBlocksReadBack(kv, seq, 7, RECORDS);
        assertEquals(0, kv.stats().diskMisses());
        assertEquals(0, kv.stats().cache().failedPromotions());
        assertEquals(List.of(), kv.checkInvariants());

        seq.close();
        assertEquals(0, kv.stats().disk().pinnedBlocks(), "closing the sequence unpins its records");
        for (int j = 0; j < RECORDS; j++) { // now the new spills evict the sequence's records, least recent first
            assertTrue(spillCached(kv, 200 + j, 20_000 + 100 * j), "spill " + j + " after close");
        }
        assertTrue(kv.stats().disk().evictions() >= RECORDS, "evictions " + kv.stats().disk().evictions());
        try (Sequence again = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(0, again.matchPrefix(tokens(0, 16 * RECORDS)), "evicted once unreferenced");
        }
        assertEquals(0, kv.stats().diskMisses());
    }

    @Test
    void aDiskOnlyBlockMatchedByAPrefixIsPinnedUntilTheMatchingSequenceCloses() {
        // The first sequence's blocks are retired once unreferenced (held by hash alone), so the
        // match adopts their records; without promotion on match it binds them disk-only.
        KvBlockManager kv = Managers.build(invariants, KvBlockManager.builder(Managers.LAYOUT).promoteOnMatch(false), 2, 2,
                DiskOptions.at(dir.resolve("kv")).withSegmentBytes(SEGMENT).withBudgetBytes(SEGMENT + 4096)
                        .withCompression(Compression.NONE).withLowSpaceWarnBytes(0));
        try (Sequence first = kv.openSequence(SequenceOptions.defaults())) {
            appendWritten(first, 9, tokens(0, 32));
            pushToDisk(kv, first, 2);
        }
        kv.runMoverCycle();
        assertEquals(0, kv.stats().disk().pinnedBlocks(), "cached blocks stay evictable");
        try (Sequence seq = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(32, seq.matchPrefix(tokens(0, 32)));
            assertEquals(2, kv.stats().disk().pinnedBlocks());
            for (int j = 0; j < 2 * RECORDS; j++) { // the other records come and go; the matched two stay
                spillCached(kv, 300 + j, 30_000 + 100 * j);
            }
            assertBlocksReadBack(kv, seq, 9, 2);
        }
        assertEquals(0, kv.stats().disk().pinnedBlocks());
        assertEquals(0, kv.stats().diskMisses());
    }
}
