package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.store.DiskFormat;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link Sequence#readBlock} from each tier of a manager, without promotion. */
class WholeBlockTierTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofAuto();

    private KvBlockManager manager() {
        return Managers.build(invariants, 4, 2, DiskOptions.at(dir.resolve("kv")).withSegmentBytes(64 << 10)
                .withBudgetBytes(1 << 20).withCompression(Compression.NONE));
    }

    @Test
    void aBlockIsReadFromDeviceHostAndDiskWithoutPromotionAndCountedPerTier() {
        KvBlockManager kv = manager();
        PagedKvCache cache = kv.cache();
        KvLayout layout = kv.layout();
        MemorySegment expected = blockImage(arena.allocate(layout.bytesPerBlock()), layout, 5, 0);
        MemorySegment out = arena.allocate(layout.bytesPerBlock());
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(0, s.appendBlock(tokens(300, 16), 0, expected));
            int id = s.blockId(0);
            s.readBlock(0, out);
            assertEquals(-1, out.mismatch(expected), "from the device");
            assertTrue(cache.tierControl().demoteBlock(id));
            out.fill((byte) 0);
            s.readBlock(0, out);
            assertEquals(-1, out.mismatch(expected), "from the host");
            assertFalse(cache.diagnostics().isOnDevice(id), "a read does not promote");
            assertEquals(1, kv.evictHost(1), "spilled to disk");
            out.fill((byte) 0);
            s.readBlock(0, out);
            assertEquals(-1, out.mismatch(expected), "from the disk");
            assertFalse(cache.diagnostics().isOnDevice(id), "a read does not promote");
            assertEquals(0, kv.stats().hostUsedBlocks(), "nor load into the host");
        }
        TierStats st = kv.stats();
        assertEquals(1, st.cache().deviceReads());
        assertEquals(1, st.hostReads().blocks());
        assertEquals(1, st.diskReads().blocks());
        assertEquals(layout.bytesPerBlock(), st.diskReads().bytes());
        assertEquals(0, st.promotions().blocks());
        assertEquals(0, st.diskLoads().blocks());
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(16, s.matchPrefix(tokens(300, 16)), "still found by its hash on disk");
            s.readBlock(0, out);
            assertEquals(-1, out.mismatch(expected));
        }
    }

    @Test
    void aCorruptDiskRecordIsACountedMissAndTheBlockIsLost() throws IOException {
        KvBlockManager kv = manager();
        PagedKvCache cache = kv.cache();
        KvLayout layout = kv.layout();
        MemorySegment out = arena.allocate(layout.bytesPerBlock());
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 6, tokens(500, 16));
            int id = s.blockId(0);
            assertTrue(cache.tierControl().demoteBlock(id));
            assertEquals(1, kv.evictHost(1));
            corruptEverySegment();
            out.fill((byte) 0);
            var e = assertThrows(CorruptBlockException.class, () -> s.readBlock(0, out));
            assertEquals("block " + id, e.where());
            assertEquals(1, kv.stats().diskMisses());
            assertEquals(0, kv.stats().diskReads().blocks());
            assertThrows(CorruptBlockException.class, () -> s.readBlock(0, out), "lost stays lost");
            assertThrows(CorruptBlockException.class, () -> s.lease(0, 16).close());
        }
    }

    @Test
    void withPromotionOnMatchOffAMatchedBlockStaysBelowAndWithItOnAMoverPromotesIt() throws Exception {
        for (boolean promote : new boolean[] {false, true}) {
            KvLayout layout = Managers.LAYOUT;
            long bb = layout.bytesPerBlock();
            EmulatedDevice device = invariants.track(new EmulatedDevice(8 * bb + (1 << 20)), List::of);
            KvBlockManager kv = KvBlockManager.builder(layout).device(device, 8 * bb).host(4 * bb)
                    .recentDeviceBlocks(0).movers(1).promoteOnMatch(promote).build();
            invariants.track(kv, kv::checkInvariants);
            MemorySegment image = blockImage(arena.allocate(bb), layout, 8, 0);
            int id;
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                s.appendBlock(tokens(700, 16), 0, image);
                id = s.blockId(0);
            }
            assertTrue(kv.cache().tierControl().demoteBlock(id));
            MemorySegment out = arena.allocate(bb);
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                assertEquals(16, s.matchPrefix(tokens(700, 16)));
                long until = System.nanoTime() + (promote ? 5_000_000_000L : 200_000_000L);
                while (!kv.cache().diagnostics().isOnDevice(id) && System.nanoTime() < until) {
                    Thread.sleep(5);
                }
                assertEquals(promote, kv.cache().diagnostics().isOnDevice(id), "promoteOnMatch(" + promote + ")");
                s.readBlock(0, out);
                assertEquals(-1, out.mismatch(image));
            }
            assertEquals(promote ? 1 : 0, kv.stats().promotions().blocks());
            assertEquals(promote ? 0 : 1, kv.stats().hostReads().blocks(), "read from the host unless promoted");
            assertEquals(promote ? 1 : 0, kv.stats().cache().deviceReads());
            kv.close();
        }
    }

    @Test
    void withPromotionOnMatchOffAMatchBindsADiskRecordWithoutReadingItAndTheReadVerifiesIt() throws IOException {
        KvBlockManager kv = Managers.build(invariants, KvBlockManager.builder(Managers.LAYOUT).promoteOnMatch(false),
                4, 2, DiskOptions.at(dir.resolve("kv")).withSegmentBytes(64 << 10).withBudgetBytes(1 << 20)
                        .withCompression(Compression.NONE));
        KvLayout layout = kv.layout();
        MemorySegment[] images = new MemorySegment[2];
        for (int k = 0; k < 2; k++) { // two blocks held only by hash on disk, their ids retired
            images[k] = blockImage(arena.allocate(layout.bytesPerBlock()), layout, 20 + k, 0);
            int id;
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                s.appendBlock(tokens(900 + 100 * k, 16), 0, images[k]);
                id = s.blockId(0);
            }
            assertTrue(kv.cache().tierControl().demoteBlock(id));
            assertEquals(1, kv.evictHost(1));
        }
        assertEquals(2, kv.stats().cache().retiredIds());
        long getsBefore = kv.stats().disk().gets();
        MemorySegment out = arena.allocate(layout.bytesPerBlock());
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(16, s.matchPrefix(tokens(900, 16)));
            TierStats st = kv.stats();
            assertEquals(1, st.diskAdoptions());
            assertEquals(getsBefore, st.disk().gets(), "the match reads the header and token ids, not the payload");
            assertEquals(0, st.diskToHost().blocks());
            assertEquals(0, st.hostUsedBlocks());
            s.readBlock(0, out);
            assertEquals(-1, out.mismatch(images[0]));
        }
        TierStats st = kv.stats();
        assertEquals(getsBefore + 1, st.disk().gets(), "one verified read");
        assertEquals(1, st.diskReads().blocks());
        assertEquals(layout.bytesPerBlock(), st.diskReads().bytes());
        assertEquals(0, st.hostUsedBlocks(), "nor a host slot");

        // the second record of the first segment (the second block's): a byte of its payload, not its header
        long second = DiskFormat.SEGMENT_HEADER_BYTES + DiskFormat.recordBytes(16, layout.bytesPerBlock());
        corruptEverySegment(second + DiskFormat.RECORD_HEADER_BYTES + 16 * Integer.BYTES + 100);
        out.fill((byte) 0x55);
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(16, s.matchPrefix(tokens(1000, 16)), "the header is sound");
            assertThrows(CorruptBlockException.class, () -> s.readBlock(0, out));
        }
        for (long i = 0; i < layout.bytesPerBlock(); i++) {
            assertEquals(0, out.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i), "no byte of a damaged record, at " + i);
        }
        assertEquals(1, kv.stats().disk().corruptMisses());
        assertEquals(1, kv.stats().diskMisses());
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(0, s.matchPrefix(tokens(1000, 16)), "quarantined: a miss from now on");
            assertEquals(16, s.matchPrefix(tokens(900, 16)), "the other record is still served");
            s.readBlock(0, out);
            assertEquals(-1, out.mismatch(images[0]));
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aMatchThatFindsADamagedRecordHeaderCountsTheSameMissWithOrWithoutPromotionOnMatch(boolean promote)
            throws IOException {
        KvBlockManager kv = Managers.build(invariants, KvBlockManager.builder(Managers.LAYOUT).promoteOnMatch(promote),
                4, 2, DiskOptions.at(dir.resolve("kv")).withSegmentBytes(64 << 10).withBudgetBytes(1 << 20)
                        .withCompression(Compression.NONE));
        spillOneBlock(kv, 40, tokens(1100, 16));
        corruptEverySegment(DiskFormat.SEGMENT_HEADER_BYTES + 16); // the first record's hash: its header checksum fails
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(0, s.matchPrefix(tokens(1100, 16)));
        }
        TierStats st = kv.stats();
        assertEquals(1, st.disk().corruptMisses(), "promoteOnMatch(" + promote + ")");
        assertEquals(1, st.diskMisses(), "promoteOnMatch(" + promote + "): a disk read that found nothing usable");
        assertEquals(st.disk().gets(), st.disk().hits() + st.disk().misses(), "gets = hits + misses: " + st.disk());
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aRecordWhoseTokenIdsAreDamagedIsQuarantinedAtTheMatchAndTheRecomputedBlockIsServed(boolean promote)
            throws IOException {
        KvBlockManager kv = Managers.build(invariants, KvBlockManager.builder(Managers.LAYOUT).promoteOnMatch(promote),
                4, 2, DiskOptions.at(dir.resolve("kv")).withSegmentBytes(64 << 10).withBudgetBytes(1 << 20)
                        .withCompression(Compression.NONE));
        KvLayout layout = kv.layout();
        int[] prompt = tokens(1200, 16);
        MemorySegment image = spillOneBlock(kv, 41, prompt);
        // a token id of the first record: covered by the payload checksum, not by the header's
        corruptEverySegment(DiskFormat.SEGMENT_HEADER_BYTES + DiskFormat.RECORD_HEADER_BYTES + 8);
        String mode = "promoteOnMatch(" + promote + ")";
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(0, s.matchPrefix(prompt), mode);
            s.appendBlock(prompt, 0, image); // the runtime computes the block again
        }
        assertEquals(1, kv.stats().disk().corruptMisses(), mode + ": the damaged record is found out and counted");
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(16, s.matchPrefix(prompt), mode + ": the recomputed block serves the prefix");
            int id = s.blockId(0);
            assertTrue(kv.cache().tierControl().demoteBlock(id));
            assertEquals(1, kv.evictHost(1), mode + ": spilled while referenced");
            MemorySegment out = arena.allocate(layout.bytesPerBlock());
            s.readBlock(0, out);
            assertEquals(-1, out.mismatch(image), mode);
        }
    }

    @Test
    void aDamagedRecordThatReadAheadFindsIsACountedDiskMissAndTheLeaseFails() throws IOException {
        KvBlockManager kv = Managers.build(invariants, KvBlockManager.builder(Managers.LAYOUT).promoteOnMatch(false),
                4, 2, DiskOptions.at(dir.resolve("kv")).withSegmentBytes(64 << 10).withBudgetBytes(1 << 20)
                        .withCompression(Compression.NONE));
        int[] prompt = tokens(1300, 16);
        spillOneBlock(kv, 42, prompt);
        corruptEverySegment(); // the payload: the match binds the record by its sound header
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(16, s.matchPrefix(prompt));
            try (BlockStream stream = kv.stream(s, 0, 1)) {
                kv.runMoverCycle(); // the read-ahead loads the record into a host slot: its checksum fails
                kv.runMoverCycle();
                assertThrows(CorruptBlockException.class, stream::next);
            }
        }
        TierStats st = kv.stats();
        assertEquals(1, st.disk().corruptMisses());
        assertEquals(1, st.diskMisses(), "the disk read that found the record damaged");
        assertEquals(0, st.hostUsedBlocks());
    }

    /** Appends a block with {@code prompt} as its token ids, then demotes and spills it (its id retired). */
    private MemorySegment spillOneBlock(KvBlockManager kv, long contentKey, int[] prompt) {
        MemorySegment image = blockImage(arena.allocate(kv.layout().bytesPerBlock()), kv.layout(), contentKey, 0);
        int id;
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            s.appendBlock(prompt, 0, image);
            id = s.blockId(0);
        }
        assertTrue(kv.cache().tierControl().demoteBlock(id));
        assertEquals(1, kv.evictHost(1));
        return image;
    }

    /** Overwrites bytes inside the first record of every segment file (its payload). */
    private void corruptEverySegment() throws IOException {
        corruptEverySegment(1024);
    }

    /** Overwrites 8 bytes at {@code position} of every segment file. */
    private void corruptEverySegment(long position) throws IOException {
        List<Path> files;
        try (Stream<Path> list = Files.list(dir.resolve("kv"))) {
            files = list.filter(p -> p.getFileName().toString().startsWith("seg-")).toList();
        }
        assertFalse(files.isEmpty(), "no segment files in " + dir.resolve("kv"));
        for (Path f : files) {
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}), position);
            }
        }
    }
}
