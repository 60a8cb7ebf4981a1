package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.DiskStats;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A disk record found damaged while blocks that reference it are held: by every path that verifies
 * a record (a read, a promotion, read-ahead, a match with and without promotion on match, a spill
 * that verifies the record it finds, a record recovered after a restart). Each test has two block
 * ids share one pinned record (a block sealed while another indexed its hash keeps its own id and
 * stores the same record), damages that record in its file, lets one path find it, then has the
 * key written anew and every sequence closed. A referenced block whose only copy was that record is
 * lost as a counted event (its lease or read fails with {@link CorruptBlockException}); a block
 * with another copy keeps its bytes; no pin, reference, lease or slot is left inconsistent (the
 * {@link CacheInvariants} extension checks the manager after each test, its disk pins included),
 * and no stale pin releases the new record's pin.
 */
class CorruptReferencedBlocksTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @TempDir
    Path dir;

    private static final int B = 16;
    private static final int[] PROMPT = tokens(4000, B);
    /** Inside the first record's payload (the shared record, written first in every test): covered by the CRC32C only. */
    private static final long PAYLOAD = RecordDamage.FIRST_PAYLOAD;
    /** Its hash field: the header checksum fails, and a match alone finds it. */
    private static final long HEADER = RecordDamage.FIRST_HEADER;

    private final Arena arena = Arena.ofAuto();
    private final KvLayout layout = Managers.LAYOUT;
    private final MemorySegment image = blockImage(arena.allocate(layout.bytesPerBlock()), layout, 77, 0);
    private final MemorySegment out = arena.allocate(layout.bytesPerBlock());

    private KvBlockManager manager(boolean promoteOnMatch, boolean persistent) {
        return Managers.build(invariants, KvBlockManager.builder(layout).promoteOnMatch(promoteOnMatch), 4, 2,
                DiskOptions.at(dir.resolve("kv")).withSegmentBytes(64 << 10).withBudgetBytes(1 << 20)
                        .withCompression(Compression.NONE).withPersistent(persistent));
    }

    /** Opens a sequence holding the prompt's block, computed (not matched): the first is indexed, later ones are duplicates. */
    private Sequence holder(KvBlockManager kv) {
        Sequence s = kv.openSequence(SequenceOptions.defaults());
        s.appendBlock(PROMPT, 0, image);
        return s;
    }

    /** Moves a block from the device through the host onto disk (its record pinned while referenced). */
    private static void toDisk(KvBlockManager kv, int id) {
        assertTrue(kv.cache().tierControl().demoteBlock(id), "demote " + id);
        assertEquals(1, kv.evictHost(1), "spill " + id);
        assertFalse(kv.cache().diagnostics().isOnDevice(id));
        assertEquals(0, kv.stats().hostUsedBlocks(), "block " + id + " held by its disk record alone");
    }

    private static int pins(KvBlockManager kv, Sequence s) {
        long[] h = kv.cache().diagnostics().blockHash(s.blockId(0));
        return kv.diskTier().pinning().pins(h[0], h[1]);
    }

    /** Two referenced blocks of the same identity, both on disk only, sharing one record with two pins. */
    private Sequence[] twoHoldersOnDisk(KvBlockManager kv) {
        Sequence a = holder(kv);
        toDisk(kv, a.blockId(0));
        Sequence b = holder(kv);
        assertTrue(a.blockId(0) != b.blockId(0), "two block ids");
        toDisk(kv, b.blockId(0));
        assertEquals(1, kv.stats().disk().blockCount(), "one record");
        assertEquals(2, pins(kv, a), "pinned once per referencing id");
        return new Sequence[] {a, b};
    }

    /**
     * One referenced block on disk only, sealed while another block of its identity held the hash
     * (a twin), and indexed in that block's place once the first is spilled and its id retired.
     */
    private Sequence twinHolderOnDisk(KvBlockManager kv) {
        Sequence first = holder(kv);
        int indexed = first.blockId(0);
        Sequence y = holder(kv); // sealed while the first block indexes the hash: its own id, a twin
        toDisk(kv, y.blockId(0));
        first.close(); // cached: spilled next, its id is retired
        toDisk(kv, indexed);
        long[] h = kv.cache().diagnostics().blockHash(y.blockId(0));
        assertEquals(y.blockId(0), kv.cache().diagnostics().indexedBlock(h[0], h[1]), "the twin took the first's place");
        assertEquals(1, pins(kv, y));
        return y;
    }

    /** The prompt's block on disk only, found by its hash alone: no block id holds it. */
    private void recordOnlyOnDisk(KvBlockManager kv) {
        try (Sequence first = holder(kv)) {
            toDisk(kv, first.blockId(0));
        } // cached, on disk only: its id is retired when the movers settle
        kv.runMoverCycle();
        assertEquals(0, kv.stats().cache().liveBlocks(), "no block id holds it");
        assertEquals(1, kv.stats().disk().blockCount());
    }

    /** Overwrites 8 bytes at {@code position} of every segment file. */
    private void damage(long position) throws IOException {
        RecordDamage.damage(dir.resolve("kv"), position);
    }

    /** The runtime computes the block again and it goes to disk while referenced: a new record, pinned, under the key. */
    private Sequence rewrite(KvBlockManager kv) {
        Sequence z = holder(kv);
        toDisk(kv, z.blockId(0));
        assertEquals(1, pins(kv, z), "the new record holds the new block's pin only");
        return z;
    }

    private void assertOwnBytes(Sequence s, String what) {
        out.fill((byte) 0x5A);
        s.readBlock(0, out);
        assertEquals(-1, out.mismatch(image), what);
    }

    private void assertLost(Sequence s, boolean lease, String what) {
        out.fill((byte) 0x5A);
        assertThrows(CorruptBlockException.class, lease ? () -> s.lease(0, B).close() : () -> s.readBlock(0, out),
                what);
    }

    /** Closes in order, then: no pin left (live or broken), and the counts. */
    private static void closeAndAssert(KvBlockManager kv, long lostBlocks, long corruptMisses, Sequence... seqs) {
        for (Sequence s : seqs) {
            s.close(); // a stale pin released here would take the new record's pin, and the last close would throw
        }
        kv.runMoverCycle();
        assertEquals(List.of(), kv.checkInvariants());
        TierStats st = kv.stats();
        DiskStats ds = st.disk();
        assertEquals(0, ds.pinnedBlocks(), "no record pinned once nothing references it");
        assertEquals(0, kv.diskTier().pinning().brokenPins(), "every broken pin released");
        assertEquals(corruptMisses, ds.corruptMisses(), "records found damaged");
        assertEquals(corruptMisses, ds.quarantined());
        assertEquals(ds.gets(), ds.hits() + ds.misses(), "gets = hits + misses: " + ds);
        assertEquals(lostBlocks, st.cache().lostBlocks(), "blocks lost below");
        assertEquals(0, st.cache().liveBlocks() - st.cache().cachedBlocks(), "no leaked block");
    }

    @Test
    void aReadThatFindsTheSharedRecordDamagedLosesTheBlockAndTheOtherHoldersPinDoesNotReleaseTheNewRecord()
            throws IOException {
        KvBlockManager kv = manager(true, false);
        Sequence[] s = twoHoldersOnDisk(kv);
        damage(PAYLOAD);
        assertLost(s[0], false, "the read finds the only copy damaged");
        for (long i = 0; i < out.byteSize(); i++) {
            assertEquals(0, out.get(ValueLayout.JAVA_BYTE, i), "no byte of the damaged record, at " + i);
        }
        assertLost(s[0], true, "lost stays lost");
        assertEquals(1, kv.stats().diskMisses());
        Sequence z = rewrite(kv); // the key holds a sound record again, of the same identity
        s[1].close(); // its pin was on the damaged record
        assertEquals(1, pins(kv, z), "releasing a pin on the damaged record leaves the new record's pin");
        assertOwnBytes(z, "the recomputed block");
        // The other holder's block took the first's place in the index, so the quarantine's notice
        // reached it at once: lost too (its only copy was the damaged record).
        closeAndAssert(kv, 2, 1, s[0], z);
        assertEquals(1, kv.stats().diskMisses(), "one disk read found nothing usable");
    }

    @Test
    void aPromotionThatFindsTheSharedRecordDamagedLosesThatBlockWhileALeasedHolderOnTheDeviceKeepsItsBytes()
            throws IOException {
        KvBlockManager kv = manager(true, false);
        Sequence[] s = twoHoldersOnDisk(kv);
        int kept = s[1].blockId(0);
        try (BlockLease lease = s[1].lease(0, B)) { // promoted: the record stays below as its clean copy, pinned
            damage(PAYLOAD);
            assertLost(s[0], true, "the promotion finds the only copy damaged");
            assertEquals(-1, lease.block(0).mismatch(image), "the leased copy is untouched");
        }
        assertEquals(1, kv.stats().cache().failedPromotions());
        assertTrue(kv.cache().diagnostics().isOnDevice(kept));
        // the device slot must not be dropped for the record that went: the block is copied down instead
        assertTrue(kv.cache().tierControl().demoteBlock(kept));
        assertEquals(0, kv.stats().cache().cleanDrops(), "no clean copy below to drop the slot for");
        assertOwnBytes(s[1], "the block that had another copy");
        try (BlockLease lease = s[1].lease(0, B)) {
            assertEquals(-1, lease.block(0).mismatch(image), "and its lease");
        }
        closeAndAssert(kv, 1, 1, s[0], s[1]);
    }

    @Test
    void readAheadThatFindsTheSharedRecordDamagedLosesTheBlockAtOnceSoNoMatchHandsItOut() throws IOException {
        KvBlockManager kv = manager(true, false);
        Sequence[] s = twoHoldersOnDisk(kv);
        damage(PAYLOAD);
        PagedKvCache cache = kv.cache();
        assertFalse(cache.tierControl().loadBelow(s[0].blockId(0)), "the read-ahead (in transit) finds its only copy damaged");
        // Both holders' only copy: the first lost by the read-ahead, the other (indexed in its place)
        // by the quarantine's notice; now, not at their next lease.
        assertEquals(2, kv.stats().cache().lostBlocks(), "lost now, not at its next lease");
        assertEquals(0, kv.stats().hostUsedBlocks(), "the host slot it took went back");
        try (Sequence m = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(0, m.matchPrefix(PROMPT), "a match does not hand out the lost block");
        }
        assertLost(s[0], true, "its lease fails");
        Sequence z = rewrite(kv);
        assertLost(s[1], true, "the other holder's copy was the damaged record");
        assertOwnBytes(z, "the recomputed block");
        closeAndAssert(kv, 2, 1, s[1], s[0], z);
        assertEquals(1, kv.stats().diskMisses());
    }

    /** With promotion on match the match reads the payload; without it only the header (damaged here). */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aMatchThatFindsARecordDamagedMisses(boolean promoteOnMatch) throws IOException {
        KvBlockManager kv = manager(promoteOnMatch, false);
        recordOnlyOnDisk(kv);
        damage(promoteOnMatch ? PAYLOAD : HEADER);
        Sequence m = kv.openSequence(SequenceOptions.defaults());
        assertEquals(0, m.matchPrefix(PROMPT), "the damaged record is a miss");
        assertEquals(1, kv.stats().disk().corruptMisses());
        assertEquals(1, kv.stats().diskMisses(), "a disk read that found nothing usable");
        assertEquals(0, kv.stats().cache().prefixHitBlocks());
        m.appendBlock(PROMPT, 0, image); // the runtime computes it again
        toDisk(kv, m.blockId(0));
        assertEquals(1, pins(kv, m));
        assertOwnBytes(m, "the recomputed block");
        closeAndAssert(kv, 0, 1, m);
    }

    /**
     * A referenced twin indexed in the first copy's place, its only copy a record damaged since: a
     * match hands it out (it reads no record for a block it holds below), and the first read of it
     * finds the damage and loses it for every holder.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aTwinWhoseOnlyRecordIsDamagedIsLostAtItsFirstRead(boolean promoteOnMatch) throws IOException {
        KvBlockManager kv = manager(promoteOnMatch, false);
        Sequence y = twinHolderOnDisk(kv);
        damage(promoteOnMatch ? PAYLOAD : HEADER);
        Sequence m = kv.openSequence(SequenceOptions.defaults());
        assertEquals(B, m.matchPrefix(PROMPT), "the indexed twin, held below");
        assertEquals(y.blockId(0), m.blockId(0));
        assertLost(m, true, "its promotion finds the only copy damaged");
        assertEquals(1, kv.stats().disk().corruptMisses());
        assertLost(y, false, "lost for its other holder too");
        Sequence z = rewrite(kv);
        assertOwnBytes(z, "the recomputed block");
        closeAndAssert(kv, 1, 1, y, m, z);
    }

    @Test
    void aSpillThatVerifiesTheRecordItFindsQuarantinesItAndTheOtherHolderLearnsThroughTheNotice() throws IOException {
        KvBlockManager kv = manager(true, false);
        Sequence x = holder(kv);
        toDisk(kv, x.blockId(0)); // indexed, on disk only, its record pinned
        Sequence y = holder(kv); // the same block computed again, on the device
        damage(PAYLOAD);
        assertTrue(kv.cache().tierControl().demoteBlock(y.blockId(0)));
        assertEquals(1, kv.evictHost(1), "spilled: the record it found failed verification and was written anew");
        DiskStats ds = kv.stats().disk();
        assertEquals(1, ds.corruptMisses());
        assertEquals(2, ds.puts());
        assertEquals(1, pins(kv, y), "the new record holds the spilled block's pin only");
        kv.runMoverCycle(); // the quarantine's notice reaches the indexed block
        assertEquals(1, kv.stats().cache().lostBlocks(), "its only copy was the damaged record");
        assertLost(x, true, "its lease fails");
        assertOwnBytes(y, "the spilled block, from its new record");
        closeAndAssert(kv, 1, 1, x, y);
        assertEquals(0, kv.stats().diskMisses(), "no read missed: the spill found the damage");
    }

    @Test
    void aRecoveredRecordBoundByAMatchAndFoundDamagedByAVerifyingSpillLosesTheMatchedBlockOnly() throws IOException {
        KvBlockManager kv = manager(false, true);
        try (Sequence s = holder(kv)) {
            toDisk(kv, s.blockId(0));
        }
        kv.close();
        damage(PAYLOAD); // recovery reads headers only: the record comes back
        kv = manager(false, true);
        assertEquals(1, kv.stats().disk().recoveredBlocks());
        Sequence a = kv.openSequence(SequenceOptions.defaults());
        assertEquals(B, a.matchPrefix(PROMPT), "bound by its sound header, pinned");
        assertEquals(1, pins(kv, a));
        Sequence b = holder(kv); // computed again without a match: a duplicate on the device
        assertTrue(kv.cache().tierControl().demoteBlock(b.blockId(0)));
        assertEquals(1, kv.evictHost(1), "the spill verifies the recovered record, quarantines it, writes anew");
        assertEquals(1, pins(kv, b));
        assertLost(a, true, "the matched block's only copy was the recovered record");
        assertOwnBytes(b, "the recomputed block");
        closeAndAssert(kv, 1, 1, a, b);
        assertEquals(0, kv.stats().disk().recoveryFaults(), "a damaged payload passes recovery");
    }
}
