package io.tierkv.tiers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.tierkv.core.cache.RemoteRecords;
import io.tierkv.core.spi.BlockStore;
import io.tierkv.tiers.disk.store.DiskTier;
import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.constantpool.MemberRefEntry;
import java.lang.classfile.constantpool.PoolEntry;
import java.lang.constant.ClassDesc;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
            DiskRecordStore.class, LateCopies.class, HostInvariants.class, StagingPool.class,
            DeviceTier.class, RemoteTier.class, RemotePush.class, DiskTier.class);

    /** What a store must not name: the cache and its tier-facing handles. */
    private static final List<String> CACHE_TYPES = List.of("io/tierkv/core/cache/PagedKvCache",
            "io/tierkv/core/cache/TierControl", "io/tierkv/core/cache/CacheDiagnostics");

    @Test
    void noStoreNamesTheCache() throws IOException {
        List<String> found = new ArrayList<>();
        Map<Class<?>, byte[]> files = classFiles(STORES);
        files.forEach((c, bytes) -> {
            String constants = new String(bytes, StandardCharsets.ISO_8859_1);
            for (String type : CACHE_TYPES) {
                if (constants.contains(type)) {
                    found.add(c.getSimpleName() + " -> " + type);
                }
            }
        });
        assertEquals(List.of(), found, "stores calling back into the cache");
        assertEquals(true, files.size() >= STORES.size(), "every store's class file was read: " + files.size());
    }

    /** {@return the class file of every class of {@code stores}, nested classes included, by class} */
    private static Map<Class<?>, byte[]> classFiles(List<Class<?>> stores) throws IOException {
        Map<Class<?>, byte[]> files = new LinkedHashMap<>();
        for (Class<?> store : stores) {
            for (Class<?> c : store.getNestMembers()) {
                String name = c.getName();
                try (InputStream in = c.getResourceAsStream(name.substring(name.lastIndexOf('.') + 1) + ".class")) {
                    assertNotNull(in, "class file of " + name);
                    files.put(c, in.readAllBytes());
                }
            }
        }
        return files;
    }

    /** The local stores: the host tier and its parts, the disk store and the disk tier, the staging pool, the device. */
    private static final List<Class<?>> LOCAL_STORES = List.of(HostTier.class, HostBlocks.class, HostSlotStore.class,
            DiskRecordStore.class, LateCopies.class, HostInvariants.class, StagingPool.class, DeviceTier.class,
            DiskTier.class);

    /** The remote store's types, as a local store could reach it. */
    private static final List<ClassDesc> REMOTE_TYPES = List.of(ClassDesc.of(RemoteTier.class.getName()),
            ClassDesc.of(RemotePush.class.getName()), ClassDesc.of(RemoteRecords.class.getName()),
            ClassDesc.of(BlockStore.class.getName()));

    /**
     * No local store calls the remote store (issue 13, "a store never calls another tier"): the
     * cache's moves offer it blocks and fetch from it. The host tier holds it only to hand it to
     * the cache ({@link HostTier#remoteRecords}). Checked on the compiled classes' method and
     * field references, nested classes included.
     */
    @Test
    void noLocalStoreCallsTheRemoteStore() throws IOException {
        List<String> found = new ArrayList<>();
        int refs = 0;
        for (Map.Entry<Class<?>, byte[]> file : classFiles(LOCAL_STORES).entrySet()) {
            for (PoolEntry e : ClassFile.of().parse(file.getValue()).constantPool()) {
                if (e instanceof MemberRefEntry ref) {
                    refs++;
                    if (REMOTE_TYPES.contains(ref.owner().asSymbol())) {
                        found.add(file.getKey().getSimpleName() + " -> " + ref.owner().asInternalName() + "."
                                + ref.name().stringValue());
                    }
                }
            }
        }
        assertEquals(List.of(), found, "local stores calling the remote store");
        assertEquals(true, refs > 100, "the class files' references were read: " + refs);
    }
}
