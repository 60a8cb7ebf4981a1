package io.tierkv.bench.jmh;

import static io.tierkv.bench.jmh.TieredPutGetBenchmark.DISK_BYTES;
import static io.tierkv.bench.jmh.TieredPutGetBenchmark.MEMORY_BYTES;
import static io.tierkv.bench.jmh.TieredPutGetBenchmark.VALUE_BYTES;

import io.tierkv.bench.jmh.TieredPutGetStates.Base;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.caffinitas.ohc.CacheSerializer;
import org.caffinitas.ohc.OHCache;
import org.caffinitas.ohc.OHCacheBuilder;
import org.ehcache.Cache;
import org.ehcache.PersistentCacheManager;
import org.ehcache.config.builders.CacheConfigurationBuilder;
import org.ehcache.config.builders.CacheManagerBuilder;
import org.ehcache.config.builders.ResourcePoolsBuilder;
import org.ehcache.config.units.EntryUnit;
import org.ehcache.config.units.MemoryUnit;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The states {@link TieredPutGetBenchmark} measures TierKV against, in the same run: {@link Ehcache}
 * (Ehcache 3 with heap, off-heap and disk tiers at TierKV's budgets), {@link Ohc} (OHC off-heap,
 * for the working set that fits in memory) and {@link Limit} (the working set's values in one
 * mapped page-cache file: the physical limit of a get and a put).
 *
 * <p>Thread-safety: JMH gives each benchmark thread its own states ({@code Scope.Thread}).
 */
public final class TieredPutGetPeers {

    private TieredPutGetPeers() {
    }

    /** Ehcache 3 with heap, off-heap and disk tiers. */
    @State(Scope.Thread)
    public static class Ehcache extends Base {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public Ehcache() {
        }

        /** The cache manager. */
        PersistentCacheManager manager;
        /** The cache. */
        Cache<Long, byte[]> cache;
        /** Gets that missed (Ehcache evicted the key) and put the value back. */
        long misses;
        private Path dir;

        /**
         * Builds the cache, puts every key, gets each once (warm).
         *
         * @throws IOException if the benchmark files cannot be created, written or removed
         */
        @Setup(Level.Trial)
        public void setUpEhcache() throws IOException {
            setUpBase();
            dir = Files.createTempDirectory("tierkv-ehcachebench-");
            manager = CacheManagerBuilder.newCacheManagerBuilder()
                    .with(CacheManagerBuilder.persistence(dir.toFile()))
                    .withCache("kv", CacheConfigurationBuilder.newCacheConfigurationBuilder(Long.class, byte[].class,
                            ResourcePoolsBuilder.newResourcePoolsBuilder()
                                    .heap(MEMORY_BYTES / 2 / VALUE_BYTES, EntryUnit.ENTRIES)
                                    .offheap(MEMORY_BYTES / 2 >> 20, MemoryUnit.MB)
                                    .disk(DISK_BYTES >> 20, MemoryUnit.MB, false)))
                    .build(true);
            cache = manager.getCache("kv", Long.class, byte[].class);
            for (int k = 0; k < keys; k++) {
                cache.put((long) k, values[k & 15]);
            }
            int missing = 0;
            for (int k = 0; k < keys; k++) {
                byte[] v = cache.get((long) k);
                if (v == null) {
                    missing++;
                    cache.put((long) k, values[k & 15]);
                } else if (!java.util.Arrays.equals(v, values[k & 15])) {
                    throw new IllegalStateException("ehcache key " + k + ": wrong bytes");
                }
            }
            System.out.printf("%nehcache: %d of %d keys missing after the first put%n", missing, keys);
        }

        /** Closes and destroys the cache manager. */
        @TearDown(Level.Trial)
        public void tearDownEhcache() {
            System.out.printf("%nehcache: %d gets missed and put the value back%n", misses);
            manager.close();
            BenchFiles.deleteTree(dir);
            tearDownBase();
        }
    }

    /** OHC off-heap cache sized at the whole memory budget. */
    @State(Scope.Thread)
    public static class Ohc extends Base {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public Ohc() {
        }

        /** The cache. */
        OHCache<Long, byte[]> cache;
        /** {@link #out} as a buffer. */
        ByteBuffer outBuffer;

        /** Builds the cache, puts every key, gets each once (warm). */
        @Setup(Level.Trial)
        public void setUpOhc() {
            setUpBase();
            cache = OHCacheBuilder.<Long, byte[]>newBuilder()
                    .keySerializer(new LongSerializer())
                    .valueSerializer(new BytesSerializer())
                    .capacity(MEMORY_BYTES)
                    .build();
            outBuffer = out.asByteBuffer();
            for (int k = 0; k < keys; k++) {
                if (!cache.put((long) k, values[k & 15])) {
                    throw new IllegalStateException("ohc refused key " + k);
                }
            }
            for (int k = 0; k < keys; k++) {
                byte[] v = cache.get((long) k);
                if (v == null || !java.util.Arrays.equals(v, values[k & 15])) {
                    throw new IllegalStateException("ohc key " + k + ": " + (v == null ? "missing" : "wrong"));
                }
            }
        }

        /**
         * Closes the cache.
         *
         * @throws IOException if the benchmark files cannot be created, written or removed
         */
        @TearDown(Level.Trial)
        public void tearDownOhc() throws IOException {
            cache.close();
            tearDownBase();
        }
    }

    /**
     * The physical limits of a get and of a put with the working set four times the memory tiers
     * ({@code 4x}), measured beside the peers: the working set's values in one file (page cache
     * warm), mapped read-write. A get is one copy into the output, and for the share of keys that
     * cannot be in memory also one CRC32C pass over the 64 KiB (the disk tier verifies every record
     * it serves; a device or host hit needs none): keys below {@code MEMORY_BYTES / VALUE_BYTES}
     * (a quarter of the {@code 4x} working set, the most the device and host tiers can hold) are
     * copied without the checksum, the rest with it. TierKV's own share of memory hits is at most
     * that (its teardown prints its device, host and disk reads; 19-25% in the runs recorded in
     * BENCHMARKS.md), so this limit is the tighter one. A put is one CRC32C pass over a value and
     * one copy of it into the file (the least a new key costs once every tier is full and it must,
     * sooner or later, go to disk), nothing else. With {@code fits} nothing goes to disk and these
     * limits do not apply: the limit methods refuse that case (OHC is the peer there).
     */
    @State(Scope.Thread)
    public static class Limit extends Base {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public Limit() {
        }

        /** The mapped values. */
        MemorySegment file;
        /** The checksum. */
        final java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        private Arena mapArena;
        private Path path;

        /**
         * Writes and maps the file.
         *
         * @throws IOException if the file cannot be created, written or mapped
         */
        @Setup(Level.Trial)
        public void setUpLimit() throws IOException {
            setUpBase();
            path = Files.createTempFile("tierkv-limit-", ".bin");
            try (var ch = java.nio.channels.FileChannel.open(path, java.nio.file.StandardOpenOption.WRITE)) {
                for (int k = 0; k < keys; k++) {
                    ch.write(ByteBuffer.wrap(values[k & 15]));
                }
            }
            mapArena = Arena.ofShared();
            try (var ch = java.nio.channels.FileChannel.open(path, java.nio.file.StandardOpenOption.READ,
                    java.nio.file.StandardOpenOption.WRITE)) {
                file = ch.map(java.nio.channels.FileChannel.MapMode.READ_WRITE, 0, (long) keys * VALUE_BYTES, mapArena);
            }
        }

        /**
         * Unmaps and deletes the file.
         *
         * @throws IOException if the file cannot be deleted
         */
        @TearDown(Level.Trial)
        public void tearDownLimit() throws IOException {
            mapArena.close();
            Files.delete(path);
            tearDownBase();
        }
    }

    /** OHC key serializer: a long. */
    static final class LongSerializer implements CacheSerializer<Long> {
        @Override
        public void serialize(Long value, ByteBuffer buf) {
            buf.putLong(value);
        }

        @Override
        public Long deserialize(ByteBuffer buf) {
            return buf.getLong();
        }

        @Override
        public int serializedSize(Long value) {
            return 8;
        }
    }

    /** OHC value serializer: the bytes as they are (fixed length). */
    static final class BytesSerializer implements CacheSerializer<byte[]> {
        @Override
        public void serialize(byte[] value, ByteBuffer buf) {
            buf.put(value);
        }

        @Override
        public byte[] deserialize(ByteBuffer buf) {
            byte[] b = new byte[buf.remaining()];
            buf.get(b);
            return b;
        }

        @Override
        public int serializedSize(byte[] value) {
            return value.length;
        }
    }
}
