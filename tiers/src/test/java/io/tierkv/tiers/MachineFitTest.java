package io.tierkv.tiers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tierkv.core.KvLayout;
import io.tierkv.core.budget.BudgetKind;
import io.tierkv.core.budget.BudgetLedger;
import io.tierkv.core.budget.Budgets;
import io.tierkv.core.budget.MachineMemory;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.error.MachineLimitException;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.natives.DeviceBuffer;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.natives.GpuRuntime;
import io.tierkv.natives.GpuStream;
import io.tierkv.natives.MemoryInfo;
import io.tierkv.natives.PinnedHostBuffer;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.store.DiskTier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sizes are checked against the machine before anything is allocated (issue 16, item 1). Every
 * refusal here goes through a runtime that fails the test on any allocation, so a check that
 * stopped working fails the test instead of filling this machine's memory.
 */
class MachineFitTest {

    private static final long TIB = 1L << 40;
    private static final long GIB = 1L << 30;
    private static final long MIB = 1L << 20;

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    private final KvLayout layout = Managers.LAYOUT;
    private final long bb = layout.bytesPerBlock();

    @Test
    void hostBudgetAboveMemAvailableIsRefusedFastAndAllocatesNothing() {
        MachineMemory now = machineNow();
        NoAllocation gpu = invariants.track(new NoAllocation(new EmulatedDevice(1L << 50)), List::of);
        long host = 10 * TIB;
        long started = System.nanoTime();
        MachineLimitException e = assertThrows(MachineLimitException.class,
                () -> KvBlockManager.builder(layout).device(gpu, 64 * bb).host(host).movers(0).build());
        long millis = (System.nanoTime() - started) / 1_000_000;
        assertTrue(millis < 2_000, "refused in " + millis + " ms");
        assertEquals("host.budgetBytes", e.option());
        assertEquals(host, e.valueBytes());
        assertEquals("host memory", e.resource());
        assertTrue(e.requiredBytes() > host, "slots and metadata: " + e.requiredBytes());
        assertTrue(e.availableBytes() <= now.availableBytes(), e.getMessage());
        assertTrue(e.getMessage().startsWith("host.budgetBytes: 10995116277760 B (10.0 TiB) does not fit host memory: "
                + "needs "), e.getMessage());
        assertTrue(e.getMessage().contains("pinned host 10.0 TiB"), e.getMessage());
        assertTrue(e.getMessage().contains("; available " + MachineMemory.format(e.availableBytes()) + " = MemAvailable ")
                || e.getMessage().contains(" = the container's memory limit "), e.getMessage());
        assertTrue(e.getMessage().contains("of heap the JVM may still commit (-Xmx) - "), e.getMessage());
        assertEquals(0, gpu.allocations, "nothing allocated");
    }

    @Test
    void emulatedDeviceAboveMemAvailableIsRefusedAsHostMemory() {
        machineNow();
        NoAllocation gpu = invariants.track(new NoAllocation(new EmulatedDevice(1L << 50)), List::of);
        long device = 10 * TIB;
        MachineLimitException e = assertThrows(MachineLimitException.class,
                () -> KvBlockManager.builder(layout).device(gpu, device).host(64 * bb).movers(0).build());
        assertEquals("device.budgetBytes", e.option());
        assertEquals("host memory", e.resource());
        assertTrue(e.getMessage().startsWith("device.budgetBytes: 10995116277760 B (10.0 TiB) does not fit host memory: "
                + "needs "), e.getMessage());
        assertTrue(e.getMessage().contains("emulated device 10.0 TiB + pinned host 128 KiB"), e.getMessage());
        assertEquals(0, gpu.allocations, "nothing allocated");
    }

    @Test
    void budgetsThatFitAloneButNotTogetherAreRefused() {
        MachineMemory now = machineNow();
        long pool = now.poolBytes();
        assumeTrue(pool > 64 * MIB, "this machine has " + MachineMemory.format(pool) + " for pools now");
        long each = (pool * 3 / 5) / bb * bb;
        NoAllocation gpu = invariants.track(new NoAllocation(new EmulatedDevice(1L << 50)), List::of);
        MachineLimitException e = assertThrows(MachineLimitException.class,
                () -> KvBlockManager.builder(layout).device(gpu, each).host(each).movers(0).build());
        assertEquals("host.budgetBytes", e.option(), "host has the larger share with its identities");
        assertTrue(e.requiredBytes() > 2 * each, e.getMessage());
        assertEquals(0, gpu.allocations, "nothing allocated");
    }

    /**
     * Off the heap a manager's block metadata is the cache's records alone: each id's identity and
     * written positions. Before, the host tier kept a copy of the identity per host slot (96 B for
     * 16-token blocks), counted here too: 131,072 ids (112 B each) and 98,304 host slots came to
     * 23.0 MiB instead of 14.0 MiB (issue 19).
     */
    @Test
    void blockMetadataOffTheHeapIsTheCachesRecordsAlone() {
        TierSizes s = TierSizes.of(layout, 64 * MIB, 192 * MIB, -1, null);
        assertEquals(PagedKvCache.metadataBytes(layout, s.maxBlocks()), s.metadataBytes());
    }

    @Test
    void theReserveAndTheHeapTheJvmMayStillCommitAreKeptOut() {
        // 1 GiB available, 2 GiB total (reserve 256 MiB), 512 MiB of heap still to commit: 256 MiB for pools.
        Supplier<Optional<MachineMemory>> small = () -> Optional.of(new MachineMemory(GIB, 2 * GIB, "test", 512 * MIB,
                GIB));
        NoAllocation gpu = invariants.track(new NoAllocation(new EmulatedDevice(GIB)), List::of);
        MachineLimitException e = assertThrows(MachineLimitException.class, () -> KvBlockManager.builder(layout)
                .device(gpu, 64 * MIB).host(192 * MIB).movers(0).machine(small, d -> -1).build());
        assertEquals(256 * MIB, e.availableBytes());
        assertEquals(64 * MIB + 192 * MIB + bb + TierSizes.of(layout, 64 * MIB, 192 * MIB, -1, null).metadataBytes(),
                e.requiredBytes());
        assertEquals("host.budgetBytes: 201326592 B (192 MiB) does not fit host memory: needs "
                + MachineMemory.format(e.requiredBytes()) + " = emulated device 64.0 MiB + pinned host 192 MiB"
                + " + transfer staging 2.00 KiB + block metadata " + MachineMemory.format(e.requiredBytes() - 256 * MIB - bb)
                + " (131072 block ids); available 256 MiB = test - 512 MiB of heap the JVM may still commit (-Xmx)"
                + " - 256 MiB reserve", e.getMessage());
        assertEquals(0, gpu.allocations, "nothing allocated");
    }

    @Test
    void aManagerThatFitsIsBuiltAndItsChargesAreUnchanged() {
        Supplier<Optional<MachineMemory>> fits = () -> Optional.of(new MachineMemory(4 * GIB, 8 * GIB, "test", 0, GIB));
        EmulatedDevice gpu = invariants.track(new EmulatedDevice(64 * bb), List::of);
        BudgetLedger ledger = new BudgetLedger("pool", new Budgets(GIB, GIB, GIB, GIB));
        try (KvBlockManager kv = KvBlockManager.builder(layout).device(gpu, 64 * bb).host(128 * bb).transfer(4 * bb)
                .movers(0).pool(ledger).machine(fits, d -> -1).build()) {
            assertEquals(64 * bb, ledger.usedBytes(BudgetKind.DEVICE));
            assertEquals(128 * bb, ledger.usedBytes(BudgetKind.HOST));
            assertEquals(4 * bb, ledger.usedBytes(BudgetKind.TRANSFER));
            assertEquals(new Budgets(64 * bb, 128 * bb, 4 * bb, Budgets.MAX_BYTES), kv.budgets());
        }
        assertEquals(0, ledger.usedBytes(BudgetKind.DEVICE));
    }

    @Test
    void gpuBudgetAboveFreeDeviceMemoryIsRefusedBeforeAnyDeviceCall() {
        FakeGpu gpu = new FakeGpu(new MemoryInfo(4 * GIB, 80 * GIB));
        Supplier<Optional<MachineMemory>> roomy = () -> Optional.of(new MachineMemory(64 * GIB, 128 * GIB, "test", 0,
                GIB));
        MachineLimitException e = assertThrows(MachineLimitException.class, () -> KvBlockManager.builder(layout)
                .device(gpu, 4 * GIB).host(64 * bb).movers(0).machine(roomy, d -> -1).build());
        assertEquals("device.budgetBytes: 4294967296 B (4.00 GiB) does not fit FAKE device memory: needs 4.00 GiB of"
                + " device slots (2097152 blocks); available 3.00 GiB = FAKE free memory 4.00 GiB of 80.0 GiB (MemGetInfo)"
                + " - 1.00 GiB reserve", e.getMessage());
        assertEquals(3 * GIB, e.availableBytes());
        assertEquals(0, gpu.allocations, "nothing allocated");
        // Device slots on a GPU take no host memory: 3 GiB of device slots and 64 blocks of host fit
        // a machine with less host memory than that.
        Supplier<Optional<MachineMemory>> tight = () -> Optional.of(new MachineMemory(GIB, 2 * GIB, "test", 0, GIB));
        MachineLimitException fits = assertThrows(MachineLimitException.class, () -> KvBlockManager.builder(layout)
                .device(gpu, 3 * GIB).host(64 * bb).movers(0).machine(tight, d -> -1).build());
        assertEquals("FakeGpu.allocateDevice", fits.option(), "passed every check, reached the allocation");
    }

    @Test
    void theEmulatedDevicesOwnCapacityIsCheckedToo() {
        NoAllocation gpu = invariants.track(new NoAllocation(new EmulatedDevice(32 * bb)), List::of);
        MachineLimitException e = assertThrows(MachineLimitException.class,
                () -> KvBlockManager.builder(layout).device(gpu, 64 * bb).host(64 * bb).movers(0).build());
        assertEquals("device.budgetBytes: 131072 B (128 KiB) does not fit the EMULATED device's capacity: needs 128 KiB"
                + " of device slots (64 blocks); available 64.0 KiB free of its 64.0 KiB capacity", e.getMessage());
        assertEquals(0, gpu.allocations, "nothing allocated");
    }

    @Test
    void blockMetadataBeyondTheHeapIsRefused() {
        Supplier<Optional<MachineMemory>> smallHeap = () -> Optional.of(new MachineMemory(64 * GIB, 128 * GIB, "test",
                0, MIB));
        NoAllocation gpu = invariants.track(new NoAllocation(new EmulatedDevice(GIB)), List::of);
        MachineLimitException e = assertThrows(MachineLimitException.class, () -> KvBlockManager.builder(layout)
                .device(gpu, 4096 * bb).host(8192 * bb).movers(0).machine(smallHeap, d -> -1).build());
        assertEquals("host.budgetBytes: 16777216 B (16.0 MiB) does not fit the Java heap: needs about 3.00 MiB of block"
                + " metadata (12288 block ids x 256 B); available 1.00 MiB of heap at most (-Xmx: raise it, or use"
                + " larger blocks)", e.getMessage());
        assertEquals(0, gpu.allocations, "nothing allocated");
    }

    @Test
    void aPersistentJournalThatDoesNotFitTheDiskIsRefusedBeforeTheDirectoryIsCreated(@TempDir Path tmp) {
        Path dir = tmp.resolve("a/b/disk");
        DiskOptions disk = DiskOptions.at(dir).withSegmentBytes(4 * MIB).withBudgetBytes(64 * MIB)
                .withPersistent(true);
        long reserved = disk.reservedAtOpenBytes(layout);
        Supplier<Optional<MachineMemory>> roomy = () -> Optional.of(new MachineMemory(64 * GIB, 128 * GIB, "test", 0,
                GIB));
        NoAllocation gpu = invariants.track(new NoAllocation(new EmulatedDevice(GIB)), List::of);
        MachineLimitException e = assertThrows(MachineLimitException.class, () -> KvBlockManager.builder(layout)
                .device(gpu, 64 * bb).host(64 * bb).disk(disk).movers(0)
                .machine(roomy, d -> d.equals(tmp) ? reserved - 1 : -2).build());
        assertEquals("disk.budgetBytes: 67108864 B (64.0 MiB) does not fit disk space at " + dir + ": the disk tier"
                + " reserves " + MachineMemory.format(reserved) + " when it opens (the deletion journal, sized from"
                + " the budget, and its metadata); usable " + MachineMemory.format(reserved - 1) + " on the file"
                + " system of " + tmp, e.getMessage());
        assertEquals(reserved - 1, e.availableBytes());
        assertFalse(Files.exists(tmp.resolve("a")), "nothing created");
        assertEquals(0, gpu.allocations, "nothing allocated");
    }

    /**
     * A persistent tier that filled its file system reopens: its journal and metadata already hold
     * what an open reserves (a newcomer's tier on a full 3 MiB tmpfs could not be opened again).
     */
    @Test
    void aPersistentTierThatFilledItsFileSystemOpensAgainOverItsOwnFiles(@TempDir Path dir) {
        DiskOptions disk = DiskOptions.at(dir).withSegmentBytes(MIB).withBudgetBytes(64 * MIB).withPersistent(true)
                .withLowSpaceWarnBytes(0);
        Supplier<Optional<MachineMemory>> roomy = () -> Optional.of(new MachineMemory(64 * GIB, 128 * GIB, "test", 0,
                GIB));
        EmulatedDevice first = invariants.track(new EmulatedDevice(GIB), List::of);
        KvBlockManager.builder(layout).device(first, 64 * bb).host(64 * bb).disk(disk).movers(0).build().close();
        EmulatedDevice again = invariants.track(new EmulatedDevice(GIB), List::of);
        KvBlockManager reopened = KvBlockManager.builder(layout).device(again, 64 * bb).host(64 * bb).disk(disk)
                .movers(0).machine(roomy, d -> 0).build(); // a full file system: nothing usable
        assertEquals(0, reopened.stats().disk().blockCount());
        reopened.close();
        DiskOptions larger = disk.withBudgetBytes(128 * MIB); // a journal of another size is made anew: refused
        assertThrows(MachineLimitException.class, () -> KvBlockManager.builder(layout).device(again, 64 * bb)
                .host(64 * bb).disk(larger).movers(0).machine(roomy, d -> 0).build());
    }

    @Test
    void theDeviceReserveIsOneSixtyFourthOfTheDeviceWithinBounds() {
        assertEquals(64 * MIB, MachineFit.deviceReserveBytes(GIB));
        assertEquals(256 * MIB, MachineFit.deviceReserveBytes(16 * GIB));
        assertEquals(GIB, MachineFit.deviceReserveBytes(141 * GIB));
    }

    private static MachineMemory machineNow() {
        Optional<MachineMemory> now = MachineMemory.now();
        assumeTrue(now.isPresent(), "no /proc/meminfo with MemAvailable: nothing is checked here");
        return now.get();
    }

    /**
     * The emulated device, but any allocation (device or pinned host) counts and fails: the
     * checks must refuse before one is made.
     */
    private static final class NoAllocation extends DelegatingRuntime {
        private int allocations;

        NoAllocation(EmulatedDevice device) {
            super(device);
        }

        @Override
        public DeviceBuffer allocateDevice(long bytes) {
            allocations++;
            throw new AssertionError("allocateDevice(" + bytes + ") after the size checks should have refused");
        }

        @Override
        public PinnedHostBuffer allocatePinnedHost(long bytes) {
            allocations++;
            throw new AssertionError("allocatePinnedHost(" + bytes + ") after the size checks should have refused");
        }
    }

    /** A GPU that reports its memory and refuses (with a recognisable exception) to allocate. */
    private static final class FakeGpu implements GpuRuntime {
        private final MemoryInfo info;
        private int allocations;

        FakeGpu(MemoryInfo info) {
            this.info = info;
        }

        @Override
        public String name() {
            return "FAKE";
        }

        @Override
        public int deviceCount() {
            return 1;
        }

        @Override
        public MemoryInfo memoryInfo() {
            return info;
        }

        @Override
        public DeviceBuffer allocateDevice(long bytes) {
            allocations++;
            throw new MachineLimitException("FakeGpu.allocateDevice", bytes, "nothing", bytes, 0, "a fake");
        }

        @Override
        public PinnedHostBuffer allocatePinnedHost(long bytes) {
            allocations++;
            throw new AssertionError("allocatePinnedHost before allocateDevice");
        }

        @Override
        public GpuStream createStream() {
            throw new AssertionError("createStream");
        }

        @Override
        public void close() {
        }
    }
}
