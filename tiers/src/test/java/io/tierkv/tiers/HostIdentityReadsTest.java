package io.tierkv.tiers;

import io.tierkv.core.cache.BlockOwner;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.event.KvEventSink;
import io.tierkv.core.event.KvMedium;
import io.tierkv.core.prefix.BlockIdentity;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The host tier keeps no identity of its own (issue 19: it kept a 96-byte copy of the cache's
 * record per host slot, 48 B per block id off the heap in a manager with half its ids on the
 * host): it reads the cache's record of an id it holds. The cache rewrites that record only after
 * it has freed the id, which it may do as soon as the manager lock is released. So every read is made
 * with the manager lock held; a spill, the cache's own move, copies the record under the lock
 * before its disk write.
 */
class HostIdentityReadsTest {

    @TempDir
    Path dir;

    @Test
    void theHostTierReadsTheCachesRecordsOnlyUnderItsLock() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), host -> host);
                Arena arena = Arena.ofConfined()) {
            HostTier host = stack.host;
            BlockOwner owner = host.blocks.owner;
            AtomicInteger reads = new AtomicInteger();
            List<Integer> unlockedReads = new CopyOnWriteArrayList<>();
            host.attach(new DelegatingOwner(owner) {
                @Override
                public MemorySegment identity(int id) {
                    reads.incrementAndGet();
                    if (!lockedAndPlaced(host, id)) {
                        unlockedReads.add(id);
                    }
                    return owner.identity(id);
                }
            });
            List<int[]> storedTokens = new CopyOnWriteArrayList<>();
            host.setEventSink(new KvEventSink() {
                @Override
                public void blockStored(KvMedium medium, long hashHi, long hashLo, MemorySegment identity) {
                    storedTokens.add(identity.asSlice(BlockIdentity.KEY_BYTES).toArray(ValueLayout.JAVA_INT));
                }

                @Override
                public void blockRemoved(KvMedium medium, long hashHi, long hashLo) {
                }
            });

            HostDiskStack.Spilled spilled = stack.spillCachedBlock(arena); // a demotion, then a spill
            assertEquals(16, stack.disk.match(spilled.hashHi(), spilled.hashLo(), spilled.identity()),
                    "the spilled record carries the block's identity");
            assertTrue(stack.cache.tierControl().loadBelow(spilled.id()), "loaded back into a host slot");

            assertEquals(List.of(), unlockedReads, "ids whose record was read without the manager lock or a host slot");
            // the demotion's and the load's CPU events, the test's own copy (the spill's copy is the cache's own)
            assertEquals(3, reads.get(), "records read");
            assertEquals(2, storedTokens.size(), "CPU BlockStored events");
            for (int[] t : storedTokens) {
                assertArrayEquals(tokens(0, 16), t, "an event's token ids are the block's");
            }
        }
    }

    /**
     * A cache that closes (and frees its records) while a spill writes, as a manager closed under
     * a mover might: the spill writes the identity it copied before it released the lock, and its
     * commit leaves the block in no half-done state: out of its host slot, not marked moving, the
     * host tier consistent. Before, the host tier copied the record itself with the lock released
     * and could leave the block marked moving for good.
     */
    @Test
    void aCacheThatClosesWhileASpillWritesLeavesNoSpillHalfDone() {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            HostTier host = stack.host;
            int id = stack.cachedOnHost();
            ((HookedLower) stack.lower).beforeSpill = stack.cache::close;
            java.util.List<Integer> queued = new java.util.ArrayList<>();
            assertEquals(1, stack.cache.tierControl().queueSpills(1, queued::add), "queued to spill");
            assertTrue(stack.cache.tierControl().spillQueued(id), "written, and committed after the close");
            host.blocks.lock.lock();
            try {
                assertTrue(stack.disk.contains(host.blocks.hashHi(id), host.blocks.hashLo(id)), "its record");
                assertEquals(-1, host.blocks.hostSlot(id), "its host slot freed");
                assertFalse(host.blocks.is(id, HostBlocks.MOVING), "not moving");
                assertEquals(java.util.List.of(), HostInvariants.check(host));
            } finally {
                host.blocks.lock.unlock();
            }
        }
    }

    /** Whether this thread holds the manager lock and the block has a host slot. */
    @SuppressWarnings("GuardedBy") // the slot is read only once the lock is known to be held
    private static boolean lockedAndPlaced(HostTier host, int id) {
        return host.blocks.lock.isHeldByCurrentThread() && host.blocks.hostSlot(id) >= 0;
    }
}
