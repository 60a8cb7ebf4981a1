package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.firstMismatch;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.tiers.disk.DiskOptions;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Room on the host is the cache's decision ({@code HostRoom} in core): the host tier, a slot
 * store, makes none of its own, and each victim leaves by the rules (a clean copy dropped, a
 * hashed block spilled, an unreferenced one evicted, a referenced one kept when it cannot spill).
 */
class HostRoomTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @TempDir
    Path dir;

    /** A sealed block of {@code key}'s bytes over tokens {@code first..first+15}, its sequence left open. */
    private static Sequence sealed(KvBlockManager kv, long key, int first) {
        Sequence s = kv.openSequence(SequenceOptions.defaults());
        appendWritten(s, key, tokens(first, 16));
        return s;
    }

    /** A block demoted to the host, nothing referencing it. */
    private static int cachedOnHost(KvBlockManager kv, long key, int first) {
        int id;
        try (Sequence s = sealed(kv, key, first)) {
            id = s.blockId(0);
        }
        assertTrue(kv.cache().tierControl().demoteBlock(id), "demoted to the host");
        return id;
    }

    @Test
    void theHostStoreMakesNoRoomOfItsOwn() {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), host -> host)) {
            for (int i = 0; i < HostDiskStack.BLOCKS; i++) {
                int id;
                try (Sequence s = stack.cache.openSequence(SequenceOptions.defaults())) {
                    appendWritten(s, i, tokens(100 * i, 16));
                    id = s.blockId(0);
                }
                assertTrue(stack.cache.tierControl().demoteBlock(id), "demoted to the host");
            }
            stack.host.blocks.lock.lock();
            try {
                assertEquals(-1, stack.host.hostSlots().reserveFree(), "a full host offers no slot");
            } finally {
                stack.host.blocks.lock.unlock();
            }
            assertEquals(HostDiskStack.BLOCKS, stack.host.usedBlocks(), "and nothing left for one");
            assertEquals(0, stack.disk.blockCount(), "nothing spilled");
            assertEquals(HostDiskStack.BLOCKS, stack.cache.stats().liveBlocks());
        }
    }

    @Test
    void withADiskBelowACleanCopyIsDroppedAndTheRestSpillReferencedOrNot() {
        KvBlockManager kv = Managers.build(invariants, 4, 3, DiskOptions.at(dir.resolve("kv")));
        PagedKvCache cache = kv.cache();
        int clean = cachedOnHost(kv, 1, 0);
        cache.acquireLease(clean); // promoted: the device holds it, the host copy is clean
        cache.releaseLease(clean);
        cachedOnHost(kv, 2, 100);
        try (Sequence referenced = sealed(kv, 3, 200)) {
            assertTrue(cache.tierControl().demoteBlock(referenced.blockId(0)));
            assertEquals(3, kv.stats().hostUsedBlocks());

            assertEquals(3, kv.evictHost(3), "every host block left");
            assertEquals(1, kv.stats().hostCleanDrops(), "the clean copy was dropped, not written");
            assertEquals(2, kv.stats().diskSpills().blocks(), "the two others spilled");
            assertEquals(0, kv.stats().hostEvictions(), "nothing was evicted while the disk took it");
            assertEquals(0, kv.stats().hostUsedBlocks());
            assertTrue(cache.diagnostics().isOnDevice(clean), "the clean copy's block stays on the device");
            assertEquals(-1, firstMismatch(referenced, 3, 0, 16), "the referenced block reads back from disk");
        }
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(16, s.matchPrefix(tokens(100, 16)), "the unreferenced block is found again by hash");
            assertEquals(-1, firstMismatch(s, 2, 0, 16));
        }
    }

    @Test
    void withoutADiskAnUnreferencedBlockIsEvictedAndAReferencedOneStays() {
        KvBlockManager kv = Managers.build(invariants, 2, 2, null);
        PagedKvCache cache = kv.cache();
        cachedOnHost(kv, 1, 0);
        try (Sequence referenced = sealed(kv, 2, 100)) {
            assertTrue(cache.tierControl().demoteBlock(referenced.blockId(0)));

            assertEquals(1, kv.evictHost(2), "only the unreferenced block left");
            assertEquals(1, kv.stats().hostEvictions());
            assertEquals(1, kv.stats().cache().evictions(), "the cache freed the evicted id as it settled");
            assertEquals(1, kv.stats().hostUsedBlocks(), "the referenced block stays on the host");
            assertEquals(-1, firstMismatch(referenced, 2, 0, 16));
        }
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(0, s.matchPrefix(tokens(0, 16)), "the evicted block is gone");
        }
    }
}
