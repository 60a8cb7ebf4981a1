package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.BelowChanges;
import io.tierkv.core.cache.LowerTier;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.tiers.disk.store.DiskTier;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A demotion copies a block down with the cache lock released; the host tier may spill that copy
 * to disk and the disk may evict the record before the cache takes its lock back, and the block
 * may be referenced meanwhile (a prefix match finds it, still on the device). The demotion must
 * not then free the device slot, which holds the only copy left.
 */
class DemotionRaceTest {

    @TempDir
    Path dir;

    /** Delegates to the host tier; runs {@code afterDemote} once, right after a demotion's copy landed. */
    private static final class HookedLower implements LowerTier {
        private final HostTier host;
        Runnable afterDemote;

        HookedLower(HostTier host) {
            this.host = host;
        }

        @Override
        public void attach(java.util.function.IntFunction<MemorySegment> identities) {
            host.attach(identities);
        }

        @Override
        public boolean demote(int blockId, long hashHi, long hashLo, MemorySegment identity, int slot) {
            boolean ok = host.demote(blockId, hashHi, hashLo, identity, slot);
            Runnable hook = afterDemote;
            afterDemote = null;
            if (ok && hook != null) {
                hook.run();
            }
            return ok;
        }

        @Override
        public int promote(int blockId, long hashHi, long hashLo, int slot, long timeoutNanos) {
            return host.promote(blockId, hashHi, hashLo, slot, timeoutNanos);
        }

        @Override
        public boolean read(int blockId, MemorySegment identity, MemorySegment out) {
            return host.read(blockId, identity, out);
        }

        @Override
        public void releaseLateSlots(IntConsumer sink) {
            host.releaseLateSlots(sink);
        }

        @Override
        public boolean takeOverCopy(int blockId) {
            return host.takeOverCopy(blockId);
        }

        @Override
        public int residence(int blockId) {
            return host.residence(blockId);
        }

        @Override
        public boolean spill(int blockId) {
            return host.spill(blockId);
        }

        @Override
        public boolean load(int blockId, MemorySegment identity) {
            return host.load(blockId, identity);
        }

        @Override
        public int adopt(int blockId, long hashHi, long hashLo, MemorySegment identity) {
            return host.adopt(blockId, hashHi, hashLo, identity);
        }

        @Override
        public boolean pinBelow(int blockId) {
            return host.pinBelow(blockId);
        }

        @Override
        public void unpinBelow(int blockId) {
            host.unpinBelow(blockId);
        }

        @Override
        public void forget(int blockId) {
            host.forget(blockId);
        }

        @Override
        public void drainChanges(BelowChanges out) {
            host.drainChanges(out);
        }

        @Override
        public boolean hasChanges() {
            return host.hasChanges();
        }

        @Override
        public int settleDrop(int blockId, long hashHi, long hashLo) {
            return host.settleDrop(blockId, hashHi, hashLo);
        }
    }

    @Test
    void aBlockReferencedWhileItsDemotedCopyIsSpilledAndEvictedKeepsItsDeviceCopy() {
        int bb = Managers.LAYOUT.bytesPerBlock();
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            HostTier host = stack.host;
            DiskTier disk = stack.disk;
            PagedKvCache cache = stack.cache;
            HookedLower lower = (HookedLower) stack.lower;
            int id;
            try (Sequence first = cache.openSequence(SequenceOptions.defaults())) {
                appendWritten(first, 7, tokens(0, 16));
                id = first.blockId(0);
            }
            Sequence[] matched = new Sequence[1];
            lower.afterDemote = () -> { // the cache lock is released: this is what a mover and a worker may do now
                assertTrue(host.spill(id), "the host copy spills at once");
                assertEquals(1, disk.maintenance().evict(1), "and its unpinned record is evicted");
                matched[0] = cache.openSequence(SequenceOptions.defaults());
                assertEquals(16, matched[0].matchPrefix(tokens(0, 32)), "the block is found on the device");
            };
            boolean demoted = cache.tierControl().demoteBlock(id);
            assertEquals(null, lower.afterDemote, "the hook ran");
            cache.tierControl().settleBelow();
            try (Sequence seq = matched[0]; Arena arena = Arena.ofConfined()) {
                assertEquals(id, seq.blockId(0));
                MemorySegment out = arena.allocate(bb);
                MemorySegment expected = arena.allocate(bb);
                seq.readBlock(0, out); // threw CorruptBlockException: the slot was freed with the only copy
                assertEquals(-1, out.mismatch(blockImage(expected, Managers.LAYOUT, 7, 0)));
                assertFalse(demoted, "the device slot holds the only copy: the demotion is refused");
            }
            assertEquals(List.of(), cache.checkInvariants());
            assertEquals(List.of(), host.checkInvariants());
        }
    }
}
