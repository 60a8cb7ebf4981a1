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
            assertTrue(cache.demoteBlock(id));
            out.fill((byte) 0);
            s.readBlock(0, out);
            assertEquals(-1, out.mismatch(expected), "from the host");
            assertFalse(cache.isOnDevice(id), "a read does not promote");
            assertEquals(1, kv.evictHost(1), "spilled to disk");
            out.fill((byte) 0);
            s.readBlock(0, out);
            assertEquals(-1, out.mismatch(expected), "from the disk");
            assertFalse(cache.isOnDevice(id), "a read does not promote");
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
            assertTrue(cache.demoteBlock(id));
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
            assertTrue(kv.cache().demoteBlock(id));
            MemorySegment out = arena.allocate(bb);
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                assertEquals(16, s.matchPrefix(tokens(700, 16)));
                long until = System.nanoTime() + (promote ? 5_000_000_000L : 200_000_000L);
                while (!kv.cache().isOnDevice(id) && System.nanoTime() < until) {
                    Thread.sleep(5);
                }
                assertEquals(promote, kv.cache().isOnDevice(id), "promoteOnMatch(" + promote + ")");
                s.readBlock(0, out);
                assertEquals(-1, out.mismatch(image));
            }
            assertEquals(promote ? 1 : 0, kv.stats().promotions().blocks());
            assertEquals(promote ? 0 : 1, kv.stats().hostReads().blocks(), "read from the host unless promoted");
            assertEquals(promote ? 1 : 0, kv.stats().cache().deviceReads());
            kv.close();
        }
    }

    /** Overwrites bytes inside the first record of every segment file (its payload). */
    private void corruptEverySegment() throws IOException {
        List<Path> files;
        try (Stream<Path> list = Files.list(dir.resolve("kv"))) {
            files = list.filter(p -> p.getFileName().toString().startsWith("seg-")).toList();
        }
        assertFalse(files.isEmpty(), "no segment files in " + dir.resolve("kv"));
        for (Path f : files) {
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}), 1024);
            }
        }
    }
}
