package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.blockImage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.prefix.BlockHasher;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.core.prefix.HashAlgorithm;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.core.testing.Murmur3Collisions;
import io.tierkv.core.testing.Murmur3Collisions.Difference;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.store.DiskFormat;
import io.tierkv.tiers.disk.store.DiskTier;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Cross-tenant KV poisoning through the tiers below the device, with blocks crafted to collide
 * under an explicitly chosen MurmurHash3 ({@link Murmur3Collisions}): every path that finds a
 * block by hash (a spill that finds its key on disk, a match with and without promotion on match,
 * reads, promotions and read-ahead of a block bound to a record, records recovered after a
 * restart) serves each block its own bytes; with the default SHA-256 the same blocks do not
 * collide at all.
 */
class BlockIdentityTiersTest {

    private static final int B = 16;
    private static final long VICTIM = 1;
    private static final long ATTACKER = 2;

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofAuto();

    private KvBlockManager manager(HashAlgorithm algorithm, boolean promoteOnMatch) {
        return Managers.build(invariants, KvBlockManager.builder(Managers.LAYOUT).hashAlgorithm(algorithm)
                .promoteOnMatch(promoteOnMatch), 4, 4, disk());
    }

    private DiskOptions disk() {
        return DiskOptions.at(dir.resolve("kv")).withSegmentBytes(64 << 10).withBudgetBytes(1 << 20)
                .withCompression(Compression.NONE).withPersistent(true);
    }

    /** The image of block {@code index} of a prompt written with payload key {@code key}. */
    private MemorySegment image(long key, int index) {
        KvLayout layout = Managers.LAYOUT;
        return blockImage(arena.allocate(layout.bytesPerBlock()), layout, key, index * B);
    }

    /** Appends the first {@code blocks} blocks of a prompt, whole, with payload key {@code key}. */
    private static void append(KvBlockManager kv, Sequence s, int[] prompt, int blocks, long key) {
        for (int i = s.length() / B; i < blocks; i++) {
            s.appendBlock(prompt, i * B, blockImage(Arena.ofAuto().allocate(kv.layout().bytesPerBlock()),
                    kv.layout(), key, i * B));
        }
    }

    /** Moves every sealed block of a sequence from the device through the host to disk, where it can. */
    private static void spill(KvBlockManager kv, Sequence s) {
        int[] ids = new int[s.length() / B];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = s.blockId(i);
        }
        spill(kv, ids);
    }

    private static void spill(KvBlockManager kv, int[] ids) {
        for (int id : ids) {
            kv.cache().tierControl().demoteBlock(id);
        }
        kv.evictHost(16);
    }

    /**
     * Writes a prompt's blocks, closes its sequence and moves them to disk: unreferenced, so a
     * block whose record is written is held by hash alone (its id retired).
     */
    private static void spillClosed(KvBlockManager kv, SequenceOptions options, int[] prompt, long key) {
        int[] ids = new int[prompt.length / B];
        try (Sequence s = kv.openSequence(options)) {
            append(kv, s, prompt, ids.length, key);
            for (int i = 0; i < ids.length; i++) {
                ids[i] = s.blockId(i);
            }
        }
        spill(kv, ids);
    }

    private void assertOwnBytes(Sequence s, long key, String what) {
        MemorySegment out = arena.allocate(Managers.LAYOUT.bytesPerBlock());
        for (int i = 0; i < s.length() / B; i++) {
            out.fill((byte) 0);
            s.readBlock(i, out);
            assertEquals(-1, out.mismatch(image(key, i)), what + ": block " + i + " holds another block's bytes");
        }
    }

    @ParameterizedTest
    @EnumSource(Difference.class)
    void aSpillThatFindsAnotherIdentitysRecordOnDiskKeepsItsOwnBytes(Difference d) {
        Murmur3Collisions.Pair p = Murmur3Collisions.pair(d, B);
        KvBlockManager kv = manager(HashAlgorithm.MURMUR3_128, true);
        spillClosed(kv, p.attacker(), p.attackerPrompt(), ATTACKER); // the attacker's record is on disk first
        try (Sequence v = kv.openSequence(p.victim())) {
            append(kv, v, p.victimPrompt(), p.block() + 1, VICTIM);
            spill(kv, v); // the colliding block's spill is refused: it stays on the host
            assertEquals(1, kv.stats().disk().collisions(), d + ": the spill met another identity's record");
            assertOwnBytes(v, VICTIM, d + ", referenced");
        }
        try (Sequence v = kv.openSequence(p.victim())) {
            assertEquals(p.victimPrompt().length, v.matchPrefix(p.victimPrompt()), d + ": the victim's prefix is cached");
            assertOwnBytes(v, VICTIM, d + ", matched again");
        }
        try (Sequence a = kv.openSequence(p.attacker())) {
            assertEquals(p.block() * B, a.matchPrefix(p.attackerPrompt()), d + ": the attacker gets none of the victim's");
        }
    }

    @ParameterizedTest
    @CsvSource({"SALT,true", "SALT,false", "PARENT,true", "PARENT,false", "TOKENS,true", "TOKENS,false",
            "EXTRA_KEYS,true", "EXTRA_KEYS,false", "EXTRA_KEYS_ONLY,true", "EXTRA_KEYS_ONLY,false"})
    void aMatchThatFindsAnotherIdentitysRecordOnDiskIsACountedMissEitherWay(Difference d, boolean promote) {
        Murmur3Collisions.Pair p = Murmur3Collisions.pair(d, B);
        KvBlockManager kv = manager(HashAlgorithm.MURMUR3_128, promote);
        spillClosed(kv, p.attacker(), p.attackerPrompt(), ATTACKER);
        try (Sequence v = kv.openSequence(p.victim())) { // the victim's own earlier blocks, cached on the device
            append(kv, v, p.victimPrompt(), p.block(), VICTIM);
        }
        String mode = d + ", promoteOnMatch(" + promote + ")";
        try (Sequence v = kv.openSequence(p.victim())) {
            assertEquals(p.block() * B, v.matchPrefix(p.victimPrompt()), mode + ": the attacker's record is not taken");
            assertEquals(1, kv.stats().cache().hashCollisions(), mode);
            assertEquals(1, kv.stats().disk().collisions(), mode);
        }
        try (Sequence a = kv.openSequence(p.attacker())) {
            assertEquals(p.attackerPrompt().length, a.matchPrefix(p.attackerPrompt()), mode + ": its own record");
            assertOwnBytes(a, ATTACKER, mode + ", attacker");
        }
        try (Sequence v = kv.openSequence(p.victim())) {
            assertEquals(p.block() * B, v.matchPrefix(p.victimPrompt()), mode + ": nor the attacker's block, adopted");
            append(kv, v, p.victimPrompt(), p.block() + 1, VICTIM); // computed again: its own bytes
            assertOwnBytes(v, VICTIM, mode);
        }
    }

    @ParameterizedTest
    @EnumSource(Difference.class)
    void recordsRecoveredAfterARestartServeOnlyTheirOwnIdentity(Difference d) {
        Murmur3Collisions.Pair p = Murmur3Collisions.pair(d, B);
        KvBlockManager kv = manager(HashAlgorithm.MURMUR3_128, true);
        spillClosed(kv, p.attacker(), p.attackerPrompt(), ATTACKER);
        spillClosed(kv, p.victim(), p.victimPrompt(), VICTIM); // its colliding block stays on the host
        kv.close();
        kv = manager(HashAlgorithm.MURMUR3_128, true);
        try (Sequence v = kv.openSequence(p.victim())) {
            assertEquals(p.block() * B, v.matchPrefix(p.victimPrompt()), d + ": only the victim's own records");
        }
        assertEquals(1, kv.stats().disk().collisions(), d.toString());
        try (Sequence a = kv.openSequence(p.attacker())) {
            assertEquals(p.attackerPrompt().length, a.matchPrefix(p.attackerPrompt()), d.toString());
            assertOwnBytes(a, ATTACKER, d + " after a restart, attacker");
        }
        try (Sequence v = kv.openSequence(p.victim())) {
            assertEquals(p.block() * B, v.matchPrefix(p.victimPrompt()), d + ": nor the attacker's block, adopted");
            append(kv, v, p.victimPrompt(), p.block() + 1, VICTIM);
            assertOwnBytes(v, VICTIM, d + " after a restart");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"read", "lease", "read-ahead"})
    void aReferencedBlockWhoseRecordNowHoldsAnotherIdentityIsLostNotServed(String path) {
        Murmur3Collisions.Pair p = Murmur3Collisions.pair(Difference.SALT, B);
        KvBlockManager kv = manager(HashAlgorithm.MURMUR3_128, true);
        try (Sequence v = kv.openSequence(p.victim())) {
            append(kv, v, p.victimPrompt(), 1, VICTIM);
            int id = v.blockId(0);
            spill(kv, v);
            assertFalse(kv.cache().diagnostics().isOnDevice(id));
            assertEquals(0, kv.stats().hostUsedBlocks(), "the victim's block is held by its disk record alone");
            // the record is replaced under the block by one of the attacker's identity (as a quarantine
            // followed by another spill could leave it)
            long[] h = kv.cache().diagnostics().blockHash(id);
            DiskTier disk = kv.diskTier();
            assertTrue(disk.remove(h[0], h[1]));
            assertTrue(disk.put(h[0], h[1], attackerIdentity(p), image(ATTACKER, 0)));
            MemorySegment out = arena.allocate(Managers.LAYOUT.bytesPerBlock());
            switch (path) {
                case "read" -> assertThrows(CorruptBlockException.class, () -> v.readBlock(0, out));
                case "lease" -> assertThrows(CorruptBlockException.class, () -> v.lease(0, B).close());
                default -> {
                    assertFalse(kv.cache().tierControl().loadBelow(id), "read-ahead finds no record of the block's identity");
                    assertThrows(CorruptBlockException.class, () -> v.readBlock(0, out));
                }
            }
            for (long i = 0; i < out.byteSize(); i++) {
                assertEquals(0, out.get(ValueLayout.JAVA_BYTE, i), path + ": no byte of the attacker's block, at " + i);
            }
            // The block's pin names its own record: removed, that pin is broken, so the block knows
            // its copy is gone without reading the other identity's record (no collision, no read)
            assertEquals(0, kv.stats().disk().collisions(), path);
            assertEquals(0, kv.stats().diskMisses(), path);
            assertEquals(1, kv.stats().cache().lostBlocks(), path);
        }
        try (Sequence a = kv.openSequence(p.attacker())) {
            assertEquals(B, a.matchPrefix(p.attackerPrompt()), "the record serves its own block");
            assertOwnBytes(a, ATTACKER, path + ", attacker");
        }
    }

    /** The identity the attacker's first block has in a manager with the default context hasher. */
    private MemorySegment attackerIdentity(Murmur3Collisions.Pair p) {
        long[] context = new long[2];
        new BlockHasher(HashAlgorithm.SHA256_128).hashContext(p.attacker().salt(), p.attacker().extraKeys(), context);
        MemorySegment id = arena.allocate(BlockIdentity.bytes(B), 8);
        BlockIdentity.writeKey(id, 0, context[0], context[1], 0, 0);
        MemorySegment.copy(p.attackerPrompt(), 0, id, ValueLayout.JAVA_INT, BlockIdentity.KEY_BYTES, B);
        return id;
    }

    @ParameterizedTest
    @EnumSource(Difference.class)
    void withTheDefaultSha256TheCraftedBlocksAreTwoRecords(Difference d) {
        Murmur3Collisions.Pair p = Murmur3Collisions.pair(d, B);
        KvBlockManager kv = Managers.build(invariants, KvBlockManager.builder(Managers.LAYOUT), 4, 4, disk());
        spillClosed(kv, p.attacker(), p.attackerPrompt(), ATTACKER);
        spillClosed(kv, p.victim(), p.victimPrompt(), VICTIM);
        assertEquals(0, kv.stats().disk().collisions(), d.toString());
        assertEquals(p.attackerPrompt().length / B + p.victimPrompt().length / B, kv.stats().disk().blockCount(), d.toString());
        for (boolean victim : new boolean[] {true, false}) {
            try (Sequence s = kv.openSequence(victim ? p.victim() : p.attacker())) {
                int[] prompt = victim ? p.victimPrompt() : p.attackerPrompt();
                assertEquals(prompt.length, s.matchPrefix(prompt), d + (victim ? ", victim" : ", attacker"));
                assertOwnBytes(s, victim ? VICTIM : ATTACKER, d.toString());
            }
        }
        assertEquals(0, kv.stats().cache().hashCollisions(), d.toString());
    }

    @Test
    void aKeyGeneratedForAPersistentDirectoryIsKeptThereAndServesEveryRestart() {
        int[] prompt = io.tierkv.core.testing.TestCaches.tokens(500, B);
        long[] keyedHash;
        KvBlockManager kv = Managers.build(invariants, KvBlockManager.builder(Managers.LAYOUT).generatedHashKey(), 4, 4,
                disk());
        spillClosed(kv, SequenceOptions.defaults(), prompt, VICTIM);
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(B, s.matchPrefix(prompt));
            keyedHash = kv.cache().diagnostics().blockHash(s.blockId(0));
        }
        assertEquals(DiskFormat.STORED_KEY_BYTES, kv.diskTier().keySpace().storedKey().length);
        kv.close();
        for (int restart = 0; restart < 2; restart++) {
            kv = Managers.build(invariants, KvBlockManager.builder(Managers.LAYOUT).generatedHashKey(), 4, 4, disk());
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                assertEquals(B, s.matchPrefix(prompt), "restart " + restart + ": the kept key finds the record");
                assertOwnBytes(s, VICTIM, "generated key, restart " + restart);
                assertTrue(Arrays.equals(keyedHash, kv.cache().diagnostics().blockHash(s.blockId(0))), "the same key");
            }
            kv.close();
        }
        for (var wrong : new KvBlockManagerBuilder[] {
                KvBlockManager.builder(Managers.LAYOUT),
                KvBlockManager.builder(Managers.LAYOUT).hashKey(new byte[32])}) {
            var e = assertThrows(IllegalStateException.class, () -> Managers.build(invariants, wrong, 4, 4, disk()));
            assertTrue(e.getMessage().contains("keyed with a key generated for its directory"), e.getMessage());
        }
        KvBlockManager unkeyed = Managers.build(invariants, KvBlockManager.builder(Managers.LAYOUT), 4, 4, null);
        try (Sequence s = unkeyed.openSequence(SequenceOptions.defaults())) {
            append(unkeyed, s, prompt, 1, VICTIM);
            assertFalse(Arrays.equals(keyedHash, unkeyed.cache().diagnostics().blockHash(s.blockId(0))), "keyed hashes differ");
        }
        var e = assertThrows(IllegalArgumentException.class, () -> KvBlockManager.builder(Managers.LAYOUT)
                .hashAlgorithm(HashAlgorithm.MURMUR3_128).generatedHashKey().device(new io.tierkv.natives.EmulatedDevice(
                        1 << 20), 1 << 16).host(1 << 16).build());
        assertTrue(e.getMessage().startsWith("hashKey:"), e.getMessage());
    }

    @Test
    void aPersistentDirectoryRefusesAnotherHashFunctionOrKeyAndServesItsOwn() {
        byte[] key = "a deployment secret of 32 bytes.".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        int[] prompt = io.tierkv.core.testing.TestCaches.tokens(400, B);
        KvBlockManager kv = Managers.build(invariants, KvBlockManager.builder(Managers.LAYOUT).hashKey(key), 4, 4,
                disk());
        spillClosed(kv, SequenceOptions.defaults(), prompt, VICTIM);
        kv.close();
        for (var wrong : new KvBlockManagerBuilder[] {
                KvBlockManager.builder(Managers.LAYOUT),
                KvBlockManager.builder(Managers.LAYOUT).hashKey(Arrays.copyOf(key, 16)),
                KvBlockManager.builder(Managers.LAYOUT).hashAlgorithm(HashAlgorithm.MURMUR3_128)}) {
            var e = assertThrows(IllegalStateException.class, () -> Managers.build(invariants, wrong, 4, 4, disk()));
            assertTrue(e.getMessage().contains("was written with block hash SHA256_128 keyed (key fingerprint 0x")
                    && e.getMessage().contains("this manager hashes with"), e.getMessage());
        }
        kv = Managers.build(invariants, KvBlockManager.builder(Managers.LAYOUT).hashKey(key), 4, 4, disk());
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(B, s.matchPrefix(prompt), "the same key finds its records after the restart");
            assertOwnBytes(s, VICTIM, "keyed");
        }
    }
}
