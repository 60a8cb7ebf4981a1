package io.tierkv.bench.cli;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.natives.libc.Libc;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.store.DiskFormat;
import io.tierkv.tiers.disk.store.DiskTier;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tierkv restart-bench}: cold restart of a persistent disk tier beside the two physical
 * limits of reading its segment files, measured in the same run (issue 19).
 *
 * <p>Per record count: writes that many blocks of {@code --block-bytes} into a fresh persistent
 * tier (layout: 1 layer, 1 KV head, F16, 16 tokens, head dim {@code blockBytes / 64}; raw records,
 * {@code --segment-bytes} segments), closes it, and then {@code --runs} times, each step on cold
 * files (every file of the directory {@code fsync}ed and dropped from the page cache with
 * {@code posix_fadvise(POSIX_FADV_DONTNEED)}, which needs no root):
 * <ol>
 *   <li><b>recovery</b>: {@link DiskTier#open} of the persistent tier (the time a restart waits),
 *       which must find every block;</li>
 *   <li><b>limit a, sequential read</b>: every segment file read from its first byte to its
 *       high-water mark (segment header bytes 48-55) in 8 MiB positional {@link FileChannel}
 *       reads, the way {@code cat} reads;</li>
 *   <li><b>limit b, header read</b>: every record header read alone with a 64-byte positional
 *       read (pread), its magic and CRC32C checked, the next header found from its token count and
 *       stored length, as recovery walks the chain.</li>
 * </ol>
 * The three steps of a run go in a rotating order (run {@code r} starts with step {@code r mod 3},
 * then the next two), so that no step is always the one that follows the tier's writing (whose
 * write-back, on a VM, the host may still be doing after the guest's {@code fsync}) or always
 * follows the same other step; with three runs each step comes first, second and third once.
 * Recovery is timed whole, as a restart waits for it: directory lock, metadata, journal and
 * segment opening included (its fixed cost, a few milliseconds on the VM of BENCHMARKS.md); the
 * limits pay only for opening and reading the segment files.
 * Prints per count the median seconds and records/s of each over the runs, and the median over
 * the runs of {@code recovery / min(limit a, limit b)}, the figure issue 19 bounds by 1.5.
 *
 * <p>Not thread-safe; one run at a time per directory.
 */
@Command(name = "restart-bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Time the cold recovery of a persistent disk tier beside a sequential read of its segment "
                + "files and a read of just its record headers, each on cold files, in the same run."})
public final class RestartBenchCommand implements Callable<Integer> {

    private static final int TOKENS = 16;
    private static final int READ_CHUNK_BYTES = 8 << 20;
    private static final int WARMUP_ROUNDS = 5;

    /**
     * The file the command writes into every tier directory it creates; only a directory holding it
     * is ever deleted, so that a user's own {@code DIR/warmup} or {@code DIR/tier-N} is never lost.
     */
    static final String MARKER = ".tierkv-restart-bench";

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Option(names = "--block-bytes", paramLabel = "BYTES", defaultValue = "4096",
            description = "bytes per KV block, a multiple of 64 (default: ${DEFAULT-VALUE})")
    private String blockBytesText;

    @Option(names = "--records", paramLabel = "N[,N...]", split = ",", defaultValue = "1e4,1e5,1e6",
            description = "record counts, one tier each (default: ${DEFAULT-VALUE})")
    private List<String> recordsText;

    @Option(names = "--runs", paramLabel = "R", defaultValue = "3",
            description = "timed repetitions per count; medians are printed (default: ${DEFAULT-VALUE})")
    private int runs;

    @Option(names = "--segment-bytes", paramLabel = "BYTES", defaultValue = "64MiB",
            description = "segment file size (default: ${DEFAULT-VALUE})")
    private String segmentBytesText;

    @Option(names = "--warmup-records", paramLabel = "N", defaultValue = "2e4",
            description = "records of a tier recovered and read " + WARMUP_ROUNDS + " times, warm and untimed, before "
                    + "the timed runs, so that the JIT has compiled all three; 0: none, the first run then includes "
                    + "the JIT's warm-up (default: ${DEFAULT-VALUE})")
    private String warmupText;

    @Option(names = "--dir", paramLabel = "DIR",
            description = "where the tiers go, as subdirectories warmup and tier-N that the command creates, "
                    + "marks with a file " + MARKER + " and deletes after their rows; a subdirectory of that name that it did not "
                    + "mark is refused and left alone (default: a new temporary directory, deleted at the end)")
    private Path dirOption;

    /** Creates the command (picocli instantiates it). */
    public RestartBenchCommand() {
    }

    @Override
    public Integer call() throws IOException {
        long blockBytes = Check.bytes("--block-bytes", blockBytesText);
        // The layout is 1 layer x 1 head x blockBytes/64 dims, F16, 16 tokens: a head has at most 65,536 dims.
        if (blockBytes < 64 || blockBytes > 64L * 65536 || blockBytes % 64 != 0) {
            throw new IllegalArgumentException("--block-bytes " + blockBytesText + " (" + blockBytes + " B; expected "
                    + "a multiple of 64 from 64 to 4194304: 16 F16 tokens of one head of blockBytes / 64 <= 65536 dims)");
        }
        long segmentBytes = Check.bytes("--segment-bytes", segmentBytesText);
        Check.between("--segment-bytes", segmentBytes, DiskOptions.MIN_SEGMENT_BYTES, DiskOptions.MAX_SEGMENT_BYTES,
                "DiskOptions bounds");
        Check.between("--runs", runs, 1, 99, "");
        long warmup = Check.count("--warmup-records", warmupText, 0);
        long[] counts = new long[recordsText.size()];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = Check.count("--records", recordsText.get(i), 1);
        }
        KvLayout layout = KvLayout.of(1, 1, (int) (blockBytes / 64), DType.F16, TOKENS);
        long recordBytes = DiskFormat.recordBytes(TOKENS, layout.bytesPerBlock());
        boolean temp = dirOption == null;
        Path space = temp ? Path.of(System.getProperty("java.io.tmpdir")) : Check.outputDirectory("--dir", dirOption);
        if (!temp) {
            for (String name : tierNames(warmup, counts)) {
                requireOwnOrAbsent(dirOption, name);
            }
        }
        if (warmup > 0) {
            checkSpace(space, warmup, recordBytes, segmentBytes, "--warmup-records", warmupText);
        }
        for (int i = 0; i < counts.length; i++) {
            checkSpace(space, counts[i], recordBytes, segmentBytes, "--records", recordsText.get(i));
        }
        Path base = temp ? Files.createTempDirectory("tierkv-restart-") : dirOption;
        PrintWriter out = spec.commandLine().getOut();
        out.printf("restart-bench: blocks of %d B (records of %d B), %s segments, %d runs, in %s%n", blockBytes,
                recordBytes, Sizes.bytes(segmentBytes), runs, base);
        out.printf("%10s %12s %12s %12s %12s %12s %12s %8s%n", "records", "recovery s", "rec/s", "seqread s",
                "rec/s", "headers s", "rec/s", "ratio");
        try {
            if (warmup > 0) {
                DiskOptions options = options(base, "warmup", warmup, recordBytes, segmentBytes);
                write(options, layout, warmup);
                for (int r = 0; r < WARMUP_ROUNDS; r++) {
                    timeRecovery(options, layout, warmup);
                    timeSequentialRead(options.directory());
                    timeHeaderRead(options.directory(), warmup);
                }
                deleteOwnTree(options.directory());
            }
            for (long n : counts) {
                DiskOptions options = options(base, "tier-" + n, n, recordBytes, segmentBytes);
                Path dir = options.directory();
                write(options, layout, n);
                double[][] t = new double[4][runs];
                for (int r = 0; r < runs; r++) {
                    for (int step : stepOrder(r)) {
                        dropCache(dir);
                        t[step][r] = switch (step) {
                            case 0 -> timeRecovery(options, layout, n);
                            case 1 -> timeSequentialRead(dir);
                            default -> timeHeaderRead(dir, n);
                        };
                    }
                    t[3][r] = t[0][r] / Math.min(t[1][r], t[2][r]);
                }
                double rec = Medians.median(t[0]);
                double seq = Medians.median(t[1]);
                double hdr = Medians.median(t[2]);
                out.printf("%10d %12.3f %12.0f %12.3f %12.0f %12.3f %12.0f %8.2f%n", n, rec, n / rec, seq, n / seq,
                        hdr, n / hdr, Medians.median(t[3]));
                out.flush();
                deleteOwnTree(dir);
            }
        } finally {
            if (temp) {
                deleteTree(base);
            }
        }
        return 0;
    }

    /**
     * The order of a run's three steps (0 recovery, 1 sequential read, 2 header read): run
     * {@code r} starts with step {@code r mod 3} and goes on cyclically, so that over three runs
     * each step is first, second and third once.
     *
     * @param run the run, from 0
     * @return the three steps in the order to time them
     */
    static int[] stepOrder(int run) {
        int first = run % 3;
        return new int[] {first, (first + 1) % 3, (first + 2) % 3};
    }

    /** The bytes a tier of {@code n} records needs on disk: their records plus room. */
    private static long need(long n, long recordBytes, long segmentBytes) {
        return n * recordBytes * 11 / 10 + 4 * segmentBytes + (64L << 20);
    }

    /** Refuses a count the file system under {@code dir} has no room for, naming it as typed. */
    private static void checkSpace(Path dir, long n, long recordBytes, long segmentBytes, String option, String text)
            throws IOException {
        long need = n > Long.MAX_VALUE / 2 / recordBytes ? Long.MAX_VALUE : need(n, recordBytes, segmentBytes);
        long usable = Files.getFileStore(dir).getUsableSpace();
        if (need > usable) {
            throw new IllegalArgumentException(option + " " + text + ": needs about "
                    + (need == Long.MAX_VALUE ? "more than " + Sizes.bytes(Long.MAX_VALUE / 2) : Sizes.bytes(need))
                    + " on disk, " + Sizes.bytes(usable) + " usable in " + dir);
        }
    }

    /** The names of the tier directories a run creates under its base: warmup (if any), then tier-N. */
    private static List<String> tierNames(long warmup, long[] counts) {
        List<String> names = new ArrayList<>();
        if (warmup > 0) {
            names.add("warmup");
        }
        for (long n : counts) {
            names.add("tier-" + n);
        }
        return names;
    }

    /**
     * Refuses a {@code base/name} that exists but is not a directory this command created (no
     * {@link #MARKER} in it): it is the user's, and is left alone.
     */
    private static void requireOwnOrAbsent(Path base, String name) {
        Path p = base.resolve(name);
        if (Files.exists(p, LinkOption.NOFOLLOW_LINKS) && !isOwn(p)) {
            throw new IllegalArgumentException("--dir " + base + ": " + p + " exists and was not created by "
                    + "restart-bench (no " + MARKER + " in it; expected no " + name + " there: it is left alone, "
                    + "choose another --dir)");
        }
    }

    private static boolean isOwn(Path dir) {
        return Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)
                && Files.isRegularFile(dir.resolve(MARKER), LinkOption.NOFOLLOW_LINKS);
    }

    /** Options of a persistent tier of {@code n} records under {@code base}, its budget their bytes plus room. */
    private static DiskOptions options(Path base, String name, long n, long recordBytes, long segmentBytes) {
        return DiskOptions.at(base.resolve(name)).withPersistent(true).withSegmentBytes(segmentBytes)
                .withBudgetBytes(need(n, recordBytes, segmentBytes)).withLowSpaceWarnBytes(0);
    }

    /**
     * Writes {@code n} blocks (keys {@code (1, k)}) into a fresh persistent tier and closes it: a tree
     * of this command's left by an earlier run is deleted first, and the new directory is marked
     * with {@link #MARKER} before the tier opens in it.
     */
    private static void write(DiskOptions options, KvLayout layout, long n) throws IOException {
        Path dir = options.directory();
        deleteOwnTree(dir);
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(MARKER), "created by tierkv restart-bench; deleted with this directory\n",
                StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        try (Arena arena = Arena.ofConfined(); DiskTier tier = DiskTier.open(options, layout)) {
            MemorySegment block = arena.allocate(layout.bytesPerBlock(), 4096);
            for (long i = 0; i < block.byteSize() / 8; i++) {
                block.setAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
            }
            MemorySegment identity = arena.allocate(BlockIdentity.bytes(TOKENS), 8);
            for (long k = 0; k < n; k++) {
                if (!tier.put(1, k, identity, block)) {
                    throw new IllegalStateException("put " + k + " was not stored (budget " + options.budgetBytes()
                            + " B)");
                }
            }
        }
    }

    /** Seconds for a cold open of the persistent tier; checks that it found all {@code n} blocks. */
    private static double timeRecovery(DiskOptions options, KvLayout layout, long n) {
        long t0 = System.nanoTime();
        DiskTier tier = DiskTier.open(options, layout);
        double s = (System.nanoTime() - t0) / 1e9;
        try (tier) {
            if (tier.blockCount() != n || tier.stats().recoveryFaults() != 0) {
                throw new IllegalStateException("recovery found " + tier.blockCount() + " blocks of " + n + ", "
                        + tier.stats().recoveryFaults() + " faults");
            }
        }
        return s;
    }

    /** Seconds to read every segment file up to its high-water mark in 8 MiB positional reads. */
    private static double timeSequentialRead(Path dir) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(READ_CHUNK_BYTES);
        long t0 = System.nanoTime();
        long total = 0;
        for (Path file : segmentFiles(dir)) {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                long mark = highWaterMark(ch);
                for (long pos = 0; pos < mark; ) {
                    buf.clear().limit((int) Math.min(READ_CHUNK_BYTES, mark - pos));
                    int got = ch.read(buf, pos);
                    if (got <= 0) {
                        throw new IOException(file + ": end of file at " + pos + ", mark " + mark);
                    }
                    pos += got;
                    total += got;
                }
            }
        }
        double s = (System.nanoTime() - t0) / 1e9;
        if (total == 0) {
            throw new IllegalStateException("no segment bytes read in " + dir);
        }
        return s;
    }

    /**
     * Seconds to read every record header alone (64-byte pread, magic and CRC32C checked), walking
     * from each header to the next; checks that {@code n} headers were found.
     */
    private static double timeHeaderRead(Path dir, long n) throws IOException {
        ByteBuffer h = ByteBuffer.allocateDirect(DiskFormat.RECORD_HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        CRC32C crc = new CRC32C();
        long t0 = System.nanoTime();
        long found = 0;
        for (Path file : segmentFiles(dir)) {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                long mark = highWaterMark(ch);
                for (long pos = DiskFormat.SEGMENT_HEADER_BYTES; pos + DiskFormat.RECORD_HEADER_BYTES <= mark; ) {
                    readFully(ch, h, pos);
                    crc.reset();
                    crc.update(h.slice(0, 60));
                    if (h.getInt(0) != DiskFormat.RECORD_MAGIC || h.getInt(60) != (int) crc.getValue()) {
                        throw new IllegalStateException(file + ": no valid record header at " + pos);
                    }
                    pos += DiskFormat.recordBytes(h.getInt(40), h.getInt(48));
                    found++;
                }
            }
        }
        double s = (System.nanoTime() - t0) / 1e9;
        if (found != n) {
            throw new IllegalStateException("header read found " + found + " records of " + n);
        }
        return s;
    }

    /** The high-water mark of a segment file (a long at byte 48 of its header, little-endian). */
    private static long highWaterMark(FileChannel ch) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(DiskFormat.SEGMENT_HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        readFully(ch, b, 0);
        if (b.getInt(0) != DiskFormat.SEGMENT_MAGIC) {
            throw new IOException("not a segment file (magic " + Integer.toHexString(b.getInt(0)) + ")");
        }
        return Math.min(b.getLong(48), ch.size());
    }

    private static void readFully(FileChannel ch, ByteBuffer b, long pos) throws IOException {
        b.clear();
        while (b.hasRemaining()) {
            if (ch.read(b, pos + b.position()) < 0) {
                throw new IOException("end of file at " + (pos + b.position()));
            }
        }
    }

    private static List<Path> segmentFiles(Path dir) throws IOException {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.filter(p -> DiskFormat.segmentIdOf(p.getFileName().toString()) >= 0).forEach(files::add);
        }
        files.sort(Comparator.comparingInt(p -> DiskFormat.segmentIdOf(p.getFileName().toString())));
        return files;
    }

    /** Makes every file of the directory cold: fsync, then {@code POSIX_FADV_DONTNEED} (no root needed). */
    private static void dropCache(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.filter(Files::isRegularFile).toList()) {
                try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    ch.force(true);
                }
                int rc = Libc.posixFadvise(p, 0, 0, Libc.POSIX_FADV_DONTNEED);
                if (rc != 0) {
                    throw new IOException(p + ": posix_fadvise(DONTNEED) failed, errno " + rc);
                }
            }
        }
    }

    /**
     * Deletes a tier directory this command created (one holding {@link #MARKER}); anything else is
     * left alone: the checks before the run refused a base whose tier names were taken.
     */
    private static void deleteOwnTree(Path dir) {
        if (isOwn(dir)) {
            deleteTree(dir);
        } else if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new IllegalStateException(dir + " has no " + MARKER + ": not deleted");
        }
    }

    private static void deleteTree(Path root) {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + root, e);
        }
    }
}
