package io.tierkv.bench.jmh;

import static io.tierkv.bench.jmh.SpillLoadBenchmark.READ_SET_BYTES;
import static io.tierkv.bench.jmh.SpillLoadBenchmark.SOURCES;

import io.tierkv.bench.jmh.PageCacheProbe.DeviceReads;
import io.tierkv.bench.jmh.PageCacheProbe.RandomOrder;
import io.tierkv.bench.jmh.SpillLoadStates.Sources;
import io.tierkv.natives.libc.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4FastDecompressor;
import net.jpountz.lz4.LZ4SafeDecompressor;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * The states of {@link SpillLoadBenchmark}'s limits, the plain ways to write and read the same
 * bytes and lz4-java alone: {@link PlainFile}, a preallocated 128 MiB file open as a channel and
 * mapped; {@link ColdFile}, the same with its pages dropped before each call; {@link Lz4}, the
 * source blocks in direct buffers with their LZ4 forms.
 *
 * <p>Thread-safety: JMH gives each benchmark thread its own states ({@code Scope.Thread}).
 */
public final class SpillLoadLimits {

    private SpillLoadLimits() {
    }

    /** A preallocated 128 MiB file, written whole, open as a channel and mapped read-write. */
    @State(Scope.Thread)
    public static class PlainFile extends Sources {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public PlainFile() {
        }

        /** The channel. */
        FileChannel channel;
        /** The mapping of the whole file. */
        MemorySegment map;
        /** A direct buffer of one block (a view of a source block in turn is used for writes). */
        ByteBuffer readBuffer;
        /** Block positions in the file. */
        int positions;
        /** A checksum object for {@link SpillLoadBenchmark#crc32c}. */
        final CRC32C crc = new CRC32C();
        /** The file. */
        Path file;
        private Arena mapArena;
        private int nextPos;
        private Path dir;

        /**
         * Creates, fills and maps the file; touches every page of the mapping.
         *
         * @throws IOException if the benchmark files cannot be created, written or removed
         */
        @Setup(Level.Trial)
        public void setUpFile() throws IOException {
            setUpSources();
            dir = Files.createTempDirectory("tierkv-plainbench-");
            file = dir.resolve("plain.bin");
            channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            positions = (int) (READ_SET_BYTES / blockBytes);
            for (int p = 0; p < positions; p++) {
                ByteBuffer b = src[p % SOURCES].asByteBuffer();
                long pos = (long) p * blockBytes;
                while (b.hasRemaining()) {
                    pos += channel.write(b, pos);
                }
            }
            mapArena = Arena.ofShared();
            map = channel.map(FileChannel.MapMode.READ_WRITE, 0, READ_SET_BYTES, mapArena);
            for (int p = 0; p < positions; p++) {
                MemorySegment.copy(map, (long) p * blockBytes, out, 0, blockBytes);
                MemorySegment.copy(src[p % SOURCES], 0, map, (long) p * blockBytes, blockBytes);
            }
            readBuffer = out.asByteBuffer();
        }

        /**
         * The next block position of the file.
         *
         * @return its byte offset
         */
        long nextPosition() {
            int p = nextPos;
            nextPos = p + 1 == positions ? 0 : p + 1;
            return (long) p * blockBytes;
        }

        /**
         * Unmaps, closes and deletes the file.
         *
         * @throws IOException if the benchmark files cannot be created, written or removed
         */
        @TearDown(Level.Trial)
        public void tearDownFile() throws IOException {
            mapArena.close();
            channel.close();
            BenchFiles.deleteTree(dir);
            tearDownSources();
        }
    }

    /**
     * {@link PlainFile} with a cold page cache for the {@code *Cold} plain reads and writes:
     * before each call, untimed, the whole file is written back ({@code msync}), released from the
     * mapping ({@code MADV_DONTNEED}) and dropped from the page cache
     * ({@code POSIX_FADV_DONTNEED}); blocks are visited in a seeded random order.
     */
    @State(Scope.Thread)
    public static class ColdFile extends PlainFile {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public ColdFile() {
        }

        /** Byte offset of the block the next call reads or writes. */
        long position;
        private RandomOrder order;
        private DeviceReads reads;

        /**
         * Drops the file's pages and picks the next block.
         *
         * @param params names the benchmark, for the report
         */
        @Setup(Level.Invocation)
        public void dropNextBlock(BenchmarkParams params) {
            if (reads == null) {
                String name = params.getBenchmark();
                reads = new DeviceReads(name.substring(name.lastIndexOf('.') + 1) + " " + blockBytes + " B");
                order = new RandomOrder(positions);
            }
            position = (long) order.next() * blockBytes;
            map.force();
            int rc = Libc.madvise(map, Libc.MADV_DONTNEED);
            if (rc == 0) {
                rc = Libc.posixFadvise(file, 0, 0, Libc.POSIX_FADV_DONTNEED);
            }
            if (rc != 0) {
                throw new IllegalStateException("dropping the pages of " + file + ": errno " + rc);
            }
            reads.start();
        }

        /** Counts what the call read from storage. */
        @TearDown(Level.Invocation)
        public void countReads() {
            reads.stop(blockBytes);
        }

        /** Prints the storage bytes per byte asked. */
        @TearDown(Level.Trial)
        public void reportReads() {
            if (reads != null) {
                reads.report();
            }
        }
    }

    /** The same source blocks in direct buffers, and their LZ4 forms. */
    @State(Scope.Thread)
    public static class Lz4 extends Sources {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public Lz4() {
        }

        /** Whether the sources are byte-shuffled first (untimed): the peer of {@code lz4shuffle}. */
        @Param({"false", "true"})
        public boolean shuffled;

        /** lz4-java's fastest fast compressor. */
        LZ4Compressor compressor;
        /** lz4-java's fastest fast decompressor. */
        LZ4FastDecompressor decompressor;
        /** lz4-java's fastest safe decompressor (the one the disk tier uses). */
        LZ4SafeDecompressor safeDecompressor;
        /** Source blocks as direct buffers. */
        ByteBuffer[] in;
        /** Compressed forms of the source blocks. */
        ByteBuffer[] packed;
        /** Output of compression. */
        ByteBuffer dst;
        /** Output of decompression. */
        ByteBuffer raw;
        private int nextBlock;

        /**
         * Compresses every source once; prints the lz4-java ratio of the sources unshuffled and
         * shuffled with 2- and 4-byte lanes.
         *
         * @throws IOException if {@code realkv}'s model cannot be read
         */
        @Setup(Level.Trial)
        public void setUpLz4() throws IOException {
            setUpSources();
            LZ4Factory f = LZ4Factory.fastestInstance();
            compressor = f.fastCompressor();
            decompressor = f.fastDecompressor();
            safeDecompressor = f.safeDecompressor();
            int max = compressor.maxCompressedLength(blockBytes);
            in = new ByteBuffer[SOURCES];
            packed = new ByteBuffer[SOURCES];
            long stored = 0;
            int width = layout.dtype().sizeBytes();
            long[] lanes = new long[5];
            MemorySegment scratch = arena.allocate(blockBytes, 4096);
            ByteBuffer probe = arena.allocate(max, 64).asByteBuffer();
            for (int i = 0; i < SOURCES; i++) {
                for (int w : new int[] {1, 2, 4}) {
                    shuffle(src[i], scratch, w);
                    lanes[w] += compressor.compress(scratch.asByteBuffer(), 0, blockBytes, probe, 0, max);
                }
                if (shuffled) {
                    MemorySegment copy = arena.allocate(blockBytes, 4096);
                    shuffle(src[i], copy, width);
                    src[i] = copy;
                }
                in[i] = src[i].asByteBuffer();
                ByteBuffer p = arena.allocate(max, 64).asByteBuffer();
                int n = compressor.compress(in[i], 0, blockBytes, p, 0, max);
                packed[i] = p.limit(n);
                stored += n;
            }
            dst = arena.allocate(max, 64).asByteBuffer();
            raw = out.asByteBuffer();
            System.out.printf("%nratio %s lz4-java%s %s %d B: raw/compressed %.4f%n", data,
                    shuffled ? " shuffled (" + width + "-byte lanes)" : "", f, blockBytes,
                    (double) SOURCES * blockBytes / stored);
            double raw = (double) SOURCES * blockBytes;
            System.out.printf("lanes %s %d B: raw/compressed unshuffled %.4f, 2-byte lanes %.4f, 4-byte lanes %.4f%n",
                    data, blockBytes, raw / lanes[1], raw / lanes[2], raw / lanes[4]);
        }

        /**
         * Byte shuffle as the disk tier's codec does it: byte j of each {@code width}-byte element
         * goes to plane j; width 1 copies.
         */
        private void shuffle(MemorySegment from, MemorySegment to, int width) {
            long n = blockBytes / width;
            for (long e = 0; e < n; e++) {
                for (int j = 0; j < width; j++) {
                    to.set(ValueLayout.JAVA_BYTE, j * n + e, from.get(ValueLayout.JAVA_BYTE, e * width + j));
                }
            }
        }

        /** Frees the buffers. */
        @TearDown(Level.Trial)
        public void tearDownLz4() {
            tearDownSources();
        }

        /**
         * The next block index of the ring.
         *
         * @return the index
         */
        int nextIndex() {
            int i = nextBlock;
            nextBlock = i + 1 == SOURCES ? 0 : i + 1;
            return i;
        }
    }
}
