package io.tierkv.tiers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.tierkv.tiers.disk.store.DiskTier;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The stores below the device never call back into the cache (DESIGN.md, "Tier stores and the
 * one owner of block state"): they return what they let go of ({@link HostTier#drainChanges}) and
 * the cache settles it under its own lock. Checked on the compiled classes: none of a store's
 * classes, nested ones included, names the cache or the handles a mover uses to drive it.
 */
class StoreBoundaryTest {

    /** The classes of the stores: the host tier and its parts, the staging pool, the remote tier, the disk tier. */
    private static final List<Class<?>> STORES = List.of(HostTier.class, HostBlocks.class, HostSlotStore.class,
            DiskRecordStore.class, HostAdoption.class, LateCopies.class, HostInvariants.class, StagingPool.class,
            DeviceTier.class, RemoteTier.class, RemoteFetch.class, RemotePush.class, DiskTier.class);

    /** What a store must not name: the cache and its tier-facing handles. */
    private static final List<String> CACHE_TYPES = List.of("io/tierkv/core/cache/PagedKvCache",
            "io/tierkv/core/cache/TierControl", "io/tierkv/core/cache/CacheDiagnostics");

    @Test
    void noStoreNamesTheCache() throws IOException {
        List<String> found = new ArrayList<>();
        int classes = 0;
        for (Class<?> store : STORES) {
            for (Class<?> c : store.getNestMembers()) {
                String name = c.getName();
                try (InputStream in = c.getResourceAsStream(name.substring(name.lastIndexOf('.') + 1) + ".class")) {
                    assertNotNull(in, "class file of " + name);
                    String constants = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
                    classes++;
                    for (String type : CACHE_TYPES) {
                        if (constants.contains(type)) {
                            found.add(c.getSimpleName() + " -> " + type);
                        }
                    }
                }
            }
        }
        assertEquals(List.of(), found, "stores calling back into the cache");
        assertEquals(true, classes >= STORES.size(), "every store's class file was read: " + classes);
    }
}
