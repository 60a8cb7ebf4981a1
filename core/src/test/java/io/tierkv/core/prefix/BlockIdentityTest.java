package io.tierkv.core.prefix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.CacheOptions;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.core.testing.Murmur3Collisions;
import io.tierkv.core.testing.Murmur3Collisions.Difference;
import io.tierkv.core.testing.Payloads;
import io.tierkv.core.testing.TestCaches;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Block identity in the top tier, with blocks crafted to collide under MurmurHash3. */
class BlockIdentityTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    private static final KvLayout LAYOUT = TestCaches.smallLayout(16);

    private static long[] hashOf(PagedKvCache cache, Sequence s, int blockIndex) {
        return cache.diagnostics().blockHash(s.blockId(blockIndex));
    }

    @ParameterizedTest
    @EnumSource(Difference.class)
    void craftedBlocksCollideUnderMurmurAndNotUnderTheDefaultSha256(Difference d) {
        Murmur3Collisions.Pair p = Murmur3Collisions.pair(d, 16);
        long[][] murmur = hashes(p, HashAlgorithm.MURMUR3_128);
        assertArrayEquals(murmur[0], murmur[1], d + ": the crafted block collides under MurmurHash3");
        assertFalse(Arrays.equals(p.victimPrompt(), p.attackerPrompt()) && p.victim().equals(p.attacker()),
                "the blocks differ");
        long[][] sha = hashes(p, CacheOptions.of(LAYOUT, 4).hashAlgorithm());
        assertEquals(HashAlgorithm.SHA256_128, CacheOptions.of(LAYOUT, 4).hashAlgorithm(), "the default");
        assertFalse(Arrays.equals(sha[0], sha[1]), d + ": and not under SHA-256");
    }

    /** The colliding block's hash in the victim's and the attacker's sequence, with a cache of that hash. */
    private long[][] hashes(Murmur3Collisions.Pair p, HashAlgorithm algorithm) {
        PagedKvCache cache = TestCaches.singleTier(invariants, CacheOptions.of(LAYOUT, 8).withHashAlgorithm(algorithm));
        try (Sequence v = cache.openSequence(p.victim()); Sequence a = cache.openSequence(p.attacker())) {
            TestCaches.appendWritten(v, 1, p.victimPrompt());
            TestCaches.appendWritten(a, 2, p.attackerPrompt());
            return new long[][] {hashOf(cache, v, p.block()), hashOf(cache, a, p.block())};
        }
    }

    @ParameterizedTest
    @EnumSource(Difference.class)
    void aCollidingBlockInTheIndexIsACountedMissAndEachSideKeepsItsOwnBytes(Difference d) {
        Murmur3Collisions.Pair p = Murmur3Collisions.pair(d, 16);
        PagedKvCache cache = TestCaches.singleTier(invariants,
                CacheOptions.of(LAYOUT, 8).withHashAlgorithm(HashAlgorithm.MURMUR3_128));
        int blocks = p.block() + 1;
        try (Sequence v = cache.openSequence(p.victim())) { // the victim's own earlier blocks are cached
            TestCaches.appendWritten(v, 1, Arrays.copyOf(p.victimPrompt(), p.block() * 16));
        }
        try (Sequence a = cache.openSequence(p.attacker())) {
            TestCaches.appendWritten(a, 2, p.attackerPrompt()); // the attacker's block is indexed first
        }
        try (Sequence v = cache.openSequence(p.victim())) {
            assertEquals(p.block() * 16, v.matchPrefix(p.victimPrompt()), d + ": the colliding block is not taken");
            assertEquals(1, cache.stats().hashCollisions());
        }
        try (Sequence v = cache.openSequence(p.victim())) {
            TestCaches.appendWritten(v, 1, p.victimPrompt()); // computed anew: its own bytes, unindexed
            assertEquals(-1, TestCaches.firstMismatch(v, 1, 0, blocks * 16), d + ": the victim reads its own bytes");
            assertEquals(2, cache.stats().hashCollisions(), "the victim's block sealed under a taken hash");
        }
        try (Sequence a = cache.openSequence(p.attacker())) {
            assertEquals(blocks * 16, a.matchPrefix(p.attackerPrompt()), "the attacker's own block still matches");
            assertEquals(-1, TestCaches.firstMismatch(a, 2, 0, blocks * 16), d + ": with its own bytes");
        }
    }

    @Test
    void theContextFingerprintSeparatesSaltsAndExtraKeysWhateverTheBlockHash() {
        BlockHasher sha = new BlockHasher(HashAlgorithm.SHA256_128);
        long[] a = new long[2];
        long[] b = new long[2];
        long[] c = new long[2];
        sha.hashContext("tenant-a", new long[0], a);
        sha.hashContext("tenant-b", new long[0], b);
        sha.hashContext("tenant-a", new long[] {7}, c);
        assertFalse(Arrays.equals(a, b));
        assertFalse(Arrays.equals(a, c));
        long[] again = new long[2];
        sha.hashContext("tenant-a", new long[0], again);
        assertArrayEquals(a, again, "deterministic");
    }

    @Test
    void aKeyedHashDiffersFromTheUnkeyedOneAndFromAnotherKey() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment tokens = arena.allocate(64);
            long[][] h = new long[3][];
            byte[][] keys = {new byte[0], new byte[16], "another secret of 32 bytes......".getBytes()};
            for (int i = 0; i < keys.length; i++) {
                BlockHasher hasher = new BlockHasher(HashAlgorithm.SHA256_128, keys[i]);
                hasher.hashBlock(1, 2, 3, 4, new long[0], tokens, 0, 16);
                h[i] = new long[] {hasher.hi(), hasher.lo()};
            }
            assertFalse(Arrays.equals(h[0], h[1]));
            assertFalse(Arrays.equals(h[1], h[2]));
            assertNotEquals(0, BlockHasher.keyFingerprint(keys[1]));
            assertEquals(0, BlockHasher.keyFingerprint(keys[0]));
        }
    }

    @Test
    void aKeyIsRefusedForMurmurAndWhenShorterThan16Bytes() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> CacheOptions.of(LAYOUT, 4).withHashAlgorithm(HashAlgorithm.MURMUR3_128).withHashKey(new byte[16]));
        assertTrue(e.getMessage().startsWith("hashKey: 16 bytes (expected none with MURMUR3_128"), e.getMessage());
        var f = assertThrows(IllegalArgumentException.class, () -> CacheOptions.of(LAYOUT, 4).withHashKey(new byte[8]));
        assertEquals("hashKey: 8 bytes (expected >= 16, or none)", f.getMessage());
    }

    @Test
    void payloadsOfTheTwoSidesDiffer() {
        // guards the tests above: content keys 1 and 2 write different bytes at the same position
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment x = arena.allocate(LAYOUT.tokenVectorBytes());
            MemorySegment y = arena.allocate(LAYOUT.tokenVectorBytes());
            Payloads.fill(x, LAYOUT, 1, 0, 0, 0);
            Payloads.fill(y, LAYOUT, 2, 0, 0, 0);
            assertNotEquals(-1, x.mismatch(y));
        }
    }
}
