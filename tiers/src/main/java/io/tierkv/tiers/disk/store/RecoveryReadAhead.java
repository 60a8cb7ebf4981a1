package io.tierkv.tiers.disk.store;

import io.tierkv.natives.libc.Libc;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Read-ahead for {@link Recovery}'s walk along the record headers of one segment mapping: asks
 * the kernel ({@code MADV_WILLNEED}, asynchronous) for the pages the walk will read next, so that
 * the walk finds them in the page cache instead of waiting for one synchronous 4 KiB read per
 * header (segment mappings are advised {@code MADV_RANDOM}, so a fault reads only its own page).
 *
 * <p>Design. Before the walk reads the header at {@code pos}, it tells this object the length of
 * the record it just left, its guess for the records ahead (a tier's raw records all have one
 * length; compressed ones vary). Then:
 * <ul>
 *   <li><b>Dense</b> (records of at most {@link #DENSE_RECORD_BYTES}): the bytes ahead are read
 *       whole, a sequential read: the range up to {@code 2 x} {@link #WINDOW_BYTES} past the walk
 *       is advised, a window at a time whenever less than one window lies advised ahead, so the
 *       device reads one window while the walk checks the headers of the last. The headers are
 *       close enough that reading the bytes between them costs less than a read per header.</li>
 *   <li><b>Sparse</b> (longer records): only the header pages are read, each a separate request,
 *       {@link #SPARSE_DEPTH} of them ahead of the walk, at {@code pos + k x length}: many
 *       requests in flight instead of one at a time. A guess that misses (a record of another
 *       length) costs one page read that nobody uses, and the walk waits for that header as it
 *       did without read-ahead; the guesses start again from it with its length.</li>
 * </ul>
 * Advice is a hint that changes speed only: a refusal is ignored, and no verdict of recovery
 * depends on what was read ahead (every header is still verified where the walk reads it).
 *
 * <p>Measured ({@code tierkv restart-bench}, BENCHMARKS.md "Cold restart against the
 * sequential-read and header-read limits (issue 19 part 1)", 2-core VM, medians of 3): without
 * read-ahead recovery took one synchronous 4 KiB fault per header, 5-12 k records/s at any record
 * length (1e5 records of 4 KiB blocks: 12.3 s against 0.44 s for the header reads). With it,
 * 4 KiB blocks: 1e6 records 7.37 s, 0.76 of the faster limit (header reads 9.03 s, sequential
 * 20.0 s); 1e5 and 1e4 records 1.85 and 2.26 of it (0.68 s against 0.41 s, 0.10 s against 0.044 s,
 * where the open's fixed costs weigh). 256 KiB blocks: 1e4 and 2e4 records 0.17 and 0.35 of the
 * header reads (0.44 s against 2.58 s, 0.83 s against 2.73 s).
 *
 * <p>Used for segments walked on their mapping: those whose first record is longer than
 * {@link #DENSE_RECORD_BYTES}. A segment of shorter records is read with positional reads into a
 * buffer instead ({@link RecoveryWindow}), which measured faster than advising its mapping
 * (BENCHMARKS.md, "Cold restart: positional reads"); the dense mode
 * here still serves the shorter records of a segment that starts with a long one.
 *
 * <p>Not thread-safe: one per segment, used by one recovery.
 */
final class RecoveryReadAhead {

    /**
     * Longest record for which the walk reads the bytes between headers (dense); longer ones get
     * header pages only (sparse).
     */
    static final long DENSE_RECORD_BYTES = 64L << 10;
    /** Bytes advised at once in the dense mode; up to twice this lies advised ahead of the walk. */
    static final long WINDOW_BYTES = 8L << 20;
    /** Least bytes per {@code madvise} call: the kernel's default read-ahead size. */
    static final long MIN_ADVICE_BYTES = 128L << 10;
    /** Header pages advised ahead of the walk in the sparse mode. */
    static final int SPARSE_DEPTH = 64;
    /**
     * Whether recovery reads ahead at all; tests switch it off to check that recovery's index and
     * bytes do not depend on it.
     */
    static volatile boolean ENABLED = true;

    private static final long PAGE_BYTES = Libc.pageSizeBytes();

    private final MemorySegment map;
    private final long limit;
    private final long adviceBytes;
    /** Dense: end of the range advised so far. */
    private long denseTo;
    /** Sparse: the record length the guesses assume, 0 before the first. */
    private long stride;
    /** Sparse: the last header offset advised; guesses lie at it minus multiples of {@link #stride}. */
    private long sparseTo;

    /**
     * Read-ahead for the walk over {@code [0, limit)} of a segment mapping.
     *
     * @param map         the segment's mapping
     * @param limit       first byte the walk does not read (the high-water mark or the file's length)
     * @param adviceBytes bytes per {@code madvise} call ({@link #adviceBytesFor})
     */
    RecoveryReadAhead(MemorySegment map, long limit, long adviceBytes) {
        this.map = map;
        this.limit = Math.min(limit, map.byteSize());
        this.adviceBytes = adviceBytes;
    }

    /**
     * The most bytes one {@code MADV_WILLNEED} call reads on the device that holds {@code dir}:
     * the kernel clamps each call to {@code max(io_pages, ra_pages)} of the device
     * ({@code force_page_cache_readahead}), that is {@code max(max_sectors_kb, read_ahead_kb)}
     * in {@code /sys/dev/block/MAJ:MIN/queue} (or its parent's, for a partition), within
     * [{@link #MIN_ADVICE_BYTES}, {@link #WINDOW_BYTES}]; {@link #MIN_ADVICE_BYTES} where that is
     * not found (not Linux, a device without a queue). Larger calls mean fewer, larger requests:
     * on the VM of BENCHMARKS.md (8 MiB read-ahead, 4 MiB requests) 128 KiB calls left recovery of
     * 1e5 cached-on-host records at 1.75-1.98 of the limit.
     *
     * @param dir a directory on the device
     * @return bytes, a multiple of 4 KiB
     */
    static long adviceBytesFor(Path dir) {
        try {
            long dev = ((Number) Files.getAttribute(dir, "unix:dev")).longValue();
            long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & 0xfffff000L); // glibc's gnu_dev_major
            long minor = (dev & 0xff) | ((dev >>> 12) & 0xffffff00L);
            Path block = Path.of("/sys/dev/block/" + major + ":" + minor);
            Path queue = Files.isDirectory(block.resolve("queue")) ? block.resolve("queue")
                    : block.resolve("../queue");
            long kib = Math.max(readLong(queue.resolve("max_sectors_kb")), readLong(queue.resolve("read_ahead_kb")));
            return Math.clamp(kib << 10, MIN_ADVICE_BYTES, WINDOW_BYTES) & -4096L;
        } catch (IOException | RuntimeException e) {
            return MIN_ADVICE_BYTES;
        }
    }

    private static long readLong(Path file) throws IOException {
        return Files.isReadable(file) ? Long.parseLong(Files.readString(file).strip()) : 0;
    }

    /**
     * The walk is about to read the header at {@code pos}, having just left a record of
     * {@code recordBytes}: advises what it will read next.
     *
     * @param pos         the header's offset, a multiple of 64
     * @param recordBytes length of the record the walk left, the guess for those ahead
     */
    void before(long pos, long recordBytes) {
        if (!ENABLED || pos >= limit) {
            return;
        }
        if (recordBytes <= DENSE_RECORD_BYTES) {
            if (denseTo - pos >= WINDOW_BYTES) {
                return;
            }
            long from = Math.max(denseTo, pos & -PAGE_BYTES);
            long to = Math.min(limit, pos + 2 * WINDOW_BYTES); // at least a window past denseTo
            advise(from, to - from);
            denseTo = to;
            return;
        }
        if (recordBytes != stride || pos > sparseTo || (sparseTo - pos) % recordBytes != 0) {
            stride = recordBytes; // a new guess: this header was not one of the last
            sparseTo = pos;
        }
        long last = Math.min(limit - DiskFormat.RECORD_HEADER_BYTES, pos + SPARSE_DEPTH * stride);
        while (sparseTo + stride <= last) {
            sparseTo += stride;
            advise(sparseTo, DiskFormat.RECORD_HEADER_BYTES);
        }
    }

    /**
     * Advises {@code [offset, offset + bytes)} in calls of at most {@link #adviceBytes}: the
     * kernel reads at most that much per call and drops the rest of a longer range.
     */
    private void advise(long offset, long bytes) {
        for (long done = 0; done < bytes; done += adviceBytes) {
            Libc.madvise(map.asSlice(offset + done, Math.min(adviceBytes, bytes - done)), Libc.MADV_WILLNEED);
        }
    }
}
