package io.tierkv.core.cache;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.firstMismatch;
import static io.tierkv.core.testing.TestCaches.smallLayout;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tierkv.core.KvLayout;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.core.testing.TestCaches;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link Sequence#appendBlock} and {@link Sequence#readBlock} on a single-tier cache. */
class WholeBlockTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    private static final int B = 4;
    private final Arena arena = Arena.ofAuto();
    private final PagedKvCache cache = TestCaches.singleTier(invariants, CacheOptions.of(smallLayout(B), 8)
            .withAdmissionTimeoutNanos(1_000_000));
    private final KvLayout layout = cache.layout();

    private MemorySegment image(long key, int firstPosition) {
        return blockImage(arena.allocate(layout.bytesPerBlock()), layout, key, firstPosition);
    }

    @Test
    void anAppendedBlockSealsWithTheHashAndBytesOfTheSameBlockWrittenTokenByToken() {
        int[] prompt = tokens(100, 2 * B + 1);
        long[][] hashes = new long[2][];
        try (Sequence byToken = cache.openSequence(SequenceOptions.salt("a"))) {
            appendWritten(byToken, 7, tokens(100, 2 * B));
            hashes[0] = cache.diagnostics().blockHash(byToken.blockId(0));
            hashes[1] = cache.diagnostics().blockHash(byToken.blockId(1));
        }
        try (Sequence s = cache.openSequence(SequenceOptions.salt("b"))) { // another salt: nothing shared
            assertEquals(0, s.appendBlock(prompt, 0, image(7, 0)));
            assertEquals(B, s.appendBlock(prompt, B, image(7, B)));
            assertEquals(2 * B, s.length());
            assertEquals(2, s.sealedBlocks());
            assertEquals(-1, firstMismatch(s, 7, 0, 2 * B), "the image lands in KvLayout order");
            for (int t = 0; t < 2 * B; t++) {
                assertEquals(100 + t, s.tokenAt(t));
            }
        }
        try (Sequence s = cache.openSequence(SequenceOptions.salt("a"))) { // same salt: the same chain
            s.appendBlock(prompt, 0, image(7, 0));
            s.appendBlock(prompt, B, image(7, B));
            assertArrayEquals(hashes[0], cache.diagnostics().blockHash(s.blockId(0)));
            assertArrayEquals(hashes[1], cache.diagnostics().blockHash(s.blockId(1)));
        }
        try (Sequence s = cache.openSequence(SequenceOptions.salt("b"))) {
            assertEquals(2 * B, s.matchPrefix(prompt), "appended blocks are indexed and matched");
            MemorySegment out = arena.allocate(layout.bytesPerBlock());
            s.readBlock(1, out);
            assertEquals(-1, out.mismatch(image(7, B)));
        }
    }

    @Test
    void readBlockCopiesTheWholeImageAndCountsADeviceRead() {
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 3, tokens(0, 2 * B));
            MemorySegment out = arena.allocate(layout.bytesPerBlock() + 8).fill((byte) 0x55);
            s.readBlock(1, out);
            assertEquals(-1, out.asSlice(0, layout.bytesPerBlock()).mismatch(image(3, B)));
            assertEquals(0x55, out.get(java.lang.foreign.ValueLayout.JAVA_BYTE, layout.bytesPerBlock()),
                    "nothing past bytesPerBlock is written");
            assertEquals(1, cache.stats().deviceReads());
            assertEquals(1, cache.diagnostics().referenceCount(s.blockId(1)), "no lease is left behind");
        }
    }

    @Test
    void anAppendedBlockBehindAnUnwrittenOneSealsWhenThatOneIsWritten() {
        int[] prompt = tokens(50, 2 * B);
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            for (int t = 0; t < B; t++) {
                s.appendToken(prompt[t]);
            }
            s.appendBlock(prompt, B, image(9, B));
            assertEquals(0, s.sealedBlocks(), "the hash chain needs block 0 first");
            MemorySegment out = arena.allocate(layout.bytesPerBlock());
            var unsealed = assertThrows(IllegalStateException.class, () -> s.readBlock(1, out));
            assertEquals("block 1 is not sealed (sealedBlocks 0; write every position of it and of the blocks"
                    + " before it)", unsealed.getMessage());
            MemorySegment k = arena.allocate(layout.tokenVectorBytes());
            MemorySegment v = arena.allocate(layout.tokenVectorBytes());
            for (int t = 0; t < B; t++) {
                for (int l = 0; l < layout.layers(); l++) {
                    io.tierkv.core.testing.Payloads.fill(k, layout, 9, t, l, 0);
                    io.tierkv.core.testing.Payloads.fill(v, layout, 9, t, l, 1);
                    s.write(l, t, k, v);
                }
            }
            assertEquals(2, s.sealedBlocks());
            assertEquals(-1, firstMismatch(s, 9, 0, 2 * B));
        }
    }

    @Test
    void badAppendsNameFieldValueAndBoundAndChangeNothing() {
        int[] prompt = tokens(0, 2 * B);
        MemorySegment good = image(1, 0);
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            int available = cache.diagnostics().availableBlocks();
            var low = assertThrows(IndexOutOfBoundsException.class, () -> s.appendBlock(prompt, -1, good));
            assertEquals("from: -1 (expected 0 <= from <= tokenIds.length - blockSizeTokens = 8 - 4)", low.getMessage());
            var high = assertThrows(IndexOutOfBoundsException.class, () -> s.appendBlock(prompt, B + 1, good));
            assertEquals("from: 5 (expected 0 <= from <= tokenIds.length - blockSizeTokens = 8 - 4)", high.getMessage());
            var shortBlock = assertThrows(IllegalArgumentException.class,
                    () -> s.appendBlock(prompt, 0, good.asSlice(0, layout.bytesPerBlock() - 1)));
            assertEquals("block.byteSize: " + (layout.bytesPerBlock() - 1) + " (expected >= bytesPerBlock "
                    + layout.bytesPerBlock() + ")", shortBlock.getMessage());
            Arena gone = Arena.ofShared();
            MemorySegment closed = gone.allocate(layout.bytesPerBlock());
            gone.close();
            assertThrows(IllegalStateException.class, () -> s.appendBlock(prompt, 0, closed));
            assertEquals(0, s.length());
            assertEquals(0, s.blockCount());
            assertEquals(available, cache.diagnostics().availableBlocks(), "the block taken for a failed copy is freed");
            invariants.check();
            s.appendToken(1);
            var partial = assertThrows(IllegalStateException.class, () -> s.appendBlock(prompt, 0, good));
            assertEquals("appendBlock at length 1 (expected a multiple of blockSizeTokens 4; the tail block is"
                    + " partly filled)", partial.getMessage());
            assertEquals(1, s.length());
            s.close();
            assertThrows(IllegalStateException.class, () -> s.appendBlock(prompt, 0, good));
        }
    }

    @Test
    void badReadsNameFieldValueAndBound() {
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 2, tokens(0, B));
            MemorySegment out = arena.allocate(layout.bytesPerBlock());
            var index = assertThrows(IndexOutOfBoundsException.class, () -> s.readBlock(1, out));
            assertEquals("blockIndex: 1 (expected 0 <= blockIndex < blockCount 1)", index.getMessage());
            var small = assertThrows(IllegalArgumentException.class,
                    () -> s.readBlock(0, out.asSlice(0, layout.bytesPerBlock() - 8)));
            assertEquals("out: " + (layout.bytesPerBlock() - 8) + " bytes (expected writable and >= bytesPerBlock "
                    + layout.bytesPerBlock() + ")", small.getMessage());
            var readOnly = assertThrows(IllegalArgumentException.class, () -> s.readBlock(0, out.asReadOnly()));
            assertEquals("out: " + layout.bytesPerBlock() + " bytes, read-only (expected writable and >= bytesPerBlock "
                    + layout.bytesPerBlock() + ")", readOnly.getMessage());
            assertEquals(0, cache.stats().deviceReads());
            s.close();
            assertThrows(IllegalStateException.class, () -> s.readBlock(0, out));
        }
    }
}
