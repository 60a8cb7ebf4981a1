package io.tierkv.tiers;

import io.tierkv.core.KvLayout;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.core.testing.TestCaches;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.disk.DiskOptions;
import java.util.List;

/** Small tier managers over the emulated device for tests: no background mover unless asked. */
final class Managers {

    static final KvLayout LAYOUT = TestCaches.smallLayout(16);

    private Managers() {
    }

    static KvBlockManager build(CacheInvariants invariants, int deviceBlocks, int hostBlocks, DiskOptions disk) {
        return build(invariants, KvBlockManager.builder(LAYOUT), deviceBlocks, hostBlocks, disk);
    }

    static KvBlockManager build(CacheInvariants invariants, KvBlockManagerBuilder builder, int deviceBlocks,
            int hostBlocks, DiskOptions disk) {
        long bb = LAYOUT.bytesPerBlock();
        EmulatedDevice device = invariants.track(new EmulatedDevice(deviceBlocks * bb + (1 << 20)), List::of);
        builder.device(device, deviceBlocks * bb).host(hostBlocks * bb).recentDeviceBlocks(0).movers(0)
                .admissionTimeoutNanos(2_000_000);
        if (disk != null) {
            builder.disk(disk);
        }
        KvBlockManager kv = builder.build();
        return invariants.track(kv, kv::checkInvariants);
    }

    /** {@return a manager's host tier, for tests that drive or hold its parts (its field is private)} */
    static HostTier hostOf(KvBlockManager kv) {
        try {
            java.lang.reflect.Field f = KvBlockManager.class.getDeclaredField("host");
            f.setAccessible(true);
            return (HostTier) f.get(kv);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }
}
