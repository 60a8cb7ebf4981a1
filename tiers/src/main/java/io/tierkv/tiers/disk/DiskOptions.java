package io.tierkv.tiers.disk;

import io.tierkv.core.KvLayout;
import io.tierkv.tiers.disk.store.DiskFormat;
import java.nio.file.Path;

/**
 * Configuration of the disk tier, given to the tier manager's
 * {@link io.tierkv.tiers.KvBlockManagerBuilder#disk}. Immutable; each field is validated on its
 * own, so the {@code withX} methods may be called in any order (for example
 * {@code withBudgetBytes(1 << 20)} before {@code withSegmentBytes(64 << 10)}). The rules that tie
 * fields together or to the block layout (the budget holds at least one segment plus metadata, a
 * segment holds the largest record) are checked once where the options are used:
 * {@link #checkFor(KvLayout)}, called by the tier manager's builder and when the tier opens.
 *
 * <p>Start from {@link #at(Path)} and adjust with the {@code withX} methods; each returns a
 * validated copy. Every rejection is an {@link IllegalArgumentException} whose message names the
 * field, its value and the bound, for example {@code "segmentBytes: 1000 (expected a multiple of
 * 4096 in [4096, 1073741824])"}.
 *
 * @param directory             the tier's dedicated directory; created (owner-only permissions) if
 *                              absent; must not be a symbolic link
 * @param budgetBytes           the most bytes the tier keeps on disk, counting every file it
 *                              writes (segments, journal, metadata); at least
 *                              {@link #MIN_SEGMENT_BYTES} here, and at least {@code segmentBytes}
 *                              plus metadata where the options are used
 * @param segmentBytes          size of one segment file in bytes: a multiple of 4096 in
 *                              [4096, 2^30]; each is reserved whole with {@code posix_fallocate}
 * @param compression           how payloads are stored
 * @param shuffle               with {@link Compression#LZ4}: group the bytes of each element
 *                              (2 for F16/BF16, 4 for F32) before compressing, except in blocks of
 *                              256 KiB or more whose first 64 KiB LZ4 halves as they are; ignored
 *                              for 1-byte element types and for {@link Compression#NONE}
 * @param persistent            keep the files on close and recover them on the next open;
 *                              otherwise the tier starts empty and deletes its files on close
 * @param admitOnSecondSight    admission filter: store a block only the second time it is offered
 *                              (the first {@code put} of a key returns {@code false})
 * @param compactBelowLiveRatio a full tier compacts a segment in place, rather than evicting more
 *                              records, when that segment's live bytes are below this fraction of
 *                              its size; in [0, 1), 0 disables compaction
 * @param wipeOnLayoutMismatch  a persistent directory written for another layout is wiped (its
 *                              TierKV files deleted) instead of refused
 * @param lowSpaceWarnBytes     log a warning when creating a segment leaves less than this many
 *                              usable bytes on the file system; {@code >= 0}, 0 disables it
 */
public record DiskOptions(Path directory, long budgetBytes, long segmentBytes, Compression compression,
                          boolean shuffle, boolean persistent, boolean admitOnSecondSight,
                          double compactBelowLiveRatio, boolean wipeOnLayoutMismatch, long lowSpaceWarnBytes) {

    /** Smallest segment: one page. */
    public static final long MIN_SEGMENT_BYTES = 4096;
    /** Largest segment: 1 GiB, so record offsets fit in an {@code int}. */
    public static final long MAX_SEGMENT_BYTES = 1L << 30;
    /** Default budget: 1 GiB. */
    public static final long DEFAULT_BUDGET_BYTES = 1L << 30;
    /** Default segment size: 64 MiB. */
    public static final long DEFAULT_SEGMENT_BYTES = 64L << 20;
    /** Default compaction threshold: a segment less than half live is compacted under pressure. */
    public static final double DEFAULT_COMPACT_BELOW_LIVE_RATIO = 0.5;
    /** Default low-space warning threshold: 1 GiB. */
    public static final long DEFAULT_LOW_SPACE_WARN_BYTES = 1L << 30;

    /**
     * Validates every field.
     *
     * @throws IllegalArgumentException naming the field, its value and the bound
     */
    public DiskOptions {
        if (directory == null) {
            throw new IllegalArgumentException("directory: null (expected a path)");
        }
        directory = directory.toAbsolutePath().normalize();
        if (segmentBytes < MIN_SEGMENT_BYTES || segmentBytes > MAX_SEGMENT_BYTES || segmentBytes % 4096 != 0) {
            throw new IllegalArgumentException("segmentBytes: " + segmentBytes + " (expected a multiple of 4096 in ["
                    + MIN_SEGMENT_BYTES + ", " + MAX_SEGMENT_BYTES + "])");
        }
        if (budgetBytes < MIN_SEGMENT_BYTES) {
            throw new IllegalArgumentException("budgetBytes: " + budgetBytes + " (expected >= MIN_SEGMENT_BYTES "
                    + MIN_SEGMENT_BYTES + ")");
        }
        if (compression == null) {
            throw new IllegalArgumentException("compression: null (expected NONE or LZ4)");
        }
        if (!(compactBelowLiveRatio >= 0.0 && compactBelowLiveRatio < 1.0)) {
            throw new IllegalArgumentException("compactBelowLiveRatio: " + compactBelowLiveRatio
                    + " (expected 0 <= compactBelowLiveRatio < 1)");
        }
        if (lowSpaceWarnBytes < 0) {
            throw new IllegalArgumentException("lowSpaceWarnBytes: " + lowSpaceWarnBytes + " (expected >= 0)");
        }
    }

    /**
     * Options with defaults: 1 GiB budget, 64 MiB segments, no compression (shuffle on, for when
     * LZ4 is chosen), not persistent, no admission filter, compaction below 0.5 live, refuse a
     * foreign layout, warn below 1 GiB free.
     *
     * <p>Why no compression by default: on real KV blocks LZ4 saves little and costs a lot. The
     * K/V of greedy stories260K decodes (F32, {@code SpillLoadBenchmark} {@code data=realkv},
     * 256 KiB to 2 MiB blocks, BENCHMARKS.md 2026-11-30) store at raw/stored 1.006-1.024 with LZ4
     * alone and 1.14-1.17 with the shuffle (4-byte lanes); at 1 MiB the shuffled LZ4 spill took
     * 10.8 times as long as a raw one warm (2.17 ms against 0.20) and 3.4 times cold, its load 9.1
     * times warm (1.20 ms against 0.13) and 1.6 times cold (2.81 ms against 1.73: reading 14%
     * fewer bytes does not pay for decompressing them). Synthetic F16 normal and random blocks do
     * not compress (0.996, stored raw); BF16 normal reaches 1.19 shuffled; zero or repetitive
     * blocks over 250. Choose {@link Compression#LZ4} when disk space matters more than spill and
     * load time, or for data like those.
     *
     * @param directory the tier's dedicated directory
     * @return the validated options
     * @throws IllegalArgumentException if {@code directory} is null
     */
    public static DiskOptions at(Path directory) {
        return new DiskOptions(directory, DEFAULT_BUDGET_BYTES, DEFAULT_SEGMENT_BYTES, Compression.NONE, true, false,
                false, DEFAULT_COMPACT_BELOW_LIVE_RATIO, false, DEFAULT_LOW_SPACE_WARN_BYTES);
    }

    /**
     * Copies with another {@code directory}.
     *
     * @param value the new directory
     * @return a validated copy with {@code directory} replaced
     * @throws IllegalArgumentException as the canonical constructor
     */
    public DiskOptions withDirectory(Path value) {
        return new DiskOptions(value, budgetBytes, segmentBytes, compression, shuffle, persistent,
                admitOnSecondSight, compactBelowLiveRatio, wipeOnLayoutMismatch, lowSpaceWarnBytes);
    }

    /**
     * Copies with another {@code budgetBytes}.
     *
     * @param value the new budget in bytes
     * @return a validated copy with {@code budgetBytes} replaced
     * @throws IllegalArgumentException as the canonical constructor
     */
    public DiskOptions withBudgetBytes(long value) {
        return new DiskOptions(directory, value, segmentBytes, compression, shuffle, persistent,
                admitOnSecondSight, compactBelowLiveRatio, wipeOnLayoutMismatch, lowSpaceWarnBytes);
    }

    /**
     * Copies with another {@code segmentBytes}.
     *
     * @param value the new segment size in bytes
     * @return a validated copy with {@code segmentBytes} replaced
     * @throws IllegalArgumentException as the canonical constructor
     */
    public DiskOptions withSegmentBytes(long value) {
        return new DiskOptions(directory, budgetBytes, value, compression, shuffle, persistent,
                admitOnSecondSight, compactBelowLiveRatio, wipeOnLayoutMismatch, lowSpaceWarnBytes);
    }

    /**
     * Copies with another {@code compression}.
     *
     * @param value the new compression
     * @return a validated copy with {@code compression} replaced
     * @throws IllegalArgumentException as the canonical constructor
     */
    public DiskOptions withCompression(Compression value) {
        return new DiskOptions(directory, budgetBytes, segmentBytes, value, shuffle, persistent,
                admitOnSecondSight, compactBelowLiveRatio, wipeOnLayoutMismatch, lowSpaceWarnBytes);
    }

    /**
     * Copies with another {@code shuffle}.
     *
     * @param value whether to byte-shuffle before LZ4
     * @return a validated copy with {@code shuffle} replaced
     */
    public DiskOptions withShuffle(boolean value) {
        return new DiskOptions(directory, budgetBytes, segmentBytes, compression, value, persistent,
                admitOnSecondSight, compactBelowLiveRatio, wipeOnLayoutMismatch, lowSpaceWarnBytes);
    }

    /**
     * Copies with another {@code persistent}.
     *
     * @param value whether files survive close and are recovered on open
     * @return a validated copy with {@code persistent} replaced
     */
    public DiskOptions withPersistent(boolean value) {
        return new DiskOptions(directory, budgetBytes, segmentBytes, compression, shuffle, value,
                admitOnSecondSight, compactBelowLiveRatio, wipeOnLayoutMismatch, lowSpaceWarnBytes);
    }

    /**
     * Copies with another {@code admitOnSecondSight}.
     *
     * @param value whether a block is stored only when offered the second time
     * @return a validated copy with {@code admitOnSecondSight} replaced
     */
    public DiskOptions withAdmitOnSecondSight(boolean value) {
        return new DiskOptions(directory, budgetBytes, segmentBytes, compression, shuffle, persistent,
                value, compactBelowLiveRatio, wipeOnLayoutMismatch, lowSpaceWarnBytes);
    }

    /**
     * Copies with another {@code compactBelowLiveRatio}.
     *
     * @param value the new compaction threshold, a live fraction in [0, 1)
     * @return a validated copy with {@code compactBelowLiveRatio} replaced
     * @throws IllegalArgumentException as the canonical constructor
     */
    public DiskOptions withCompactBelowLiveRatio(double value) {
        return new DiskOptions(directory, budgetBytes, segmentBytes, compression, shuffle, persistent,
                admitOnSecondSight, value, wipeOnLayoutMismatch, lowSpaceWarnBytes);
    }

    /**
     * Copies with another {@code wipeOnLayoutMismatch}.
     *
     * @param value whether a directory written for another layout is wiped rather than refused
     * @return a validated copy with {@code wipeOnLayoutMismatch} replaced
     */
    public DiskOptions withWipeOnLayoutMismatch(boolean value) {
        return new DiskOptions(directory, budgetBytes, segmentBytes, compression, shuffle, persistent,
                admitOnSecondSight, compactBelowLiveRatio, value, lowSpaceWarnBytes);
    }

    /**
     * Copies with another {@code lowSpaceWarnBytes}.
     *
     * @param value the low-space warning threshold in bytes, {@code >= 0}
     * @return a validated copy with {@code lowSpaceWarnBytes} replaced
     * @throws IllegalArgumentException as the canonical constructor
     */
    public DiskOptions withLowSpaceWarnBytes(long value) {
        return new DiskOptions(directory, budgetBytes, segmentBytes, compression, shuffle, persistent,
                admitOnSecondSight, compactBelowLiveRatio, wipeOnLayoutMismatch, value);
    }

    /**
     * Checks the rules that tie the options' fields together and to the layout, which
     * {@link DiskOptions} leaves to its user so its {@code withX} methods work in any order: a
     * segment holds a 64-byte header plus the largest record of the layout, and the budget holds
     * one segment plus the metadata (and, when persistent, the journal). Touches no file.
     *
     * @param layout  the block layout
     * @throws NullPointerException     if layout is null
     * @throws IllegalArgumentException naming the field, its value and the bound; for the budget,
     *                                  the message names both {@code budgetBytes} and
     *                                  {@code segmentBytes}
     */
    public void checkFor(KvLayout layout) {
        java.util.Objects.requireNonNull(layout, "layout");
        DiskFormat.checkSegmentFits(segmentBytes(), layout);
        long journalCapacity = persistent() ? DiskFormat.journalCapacity(budgetBytes(), layout) : 0;
        long overhead = DiskFormat.META_BYTES + (persistent() ? DiskFormat.journalBytes(journalCapacity) : 0);
        if (budgetBytes() < segmentBytes() + overhead) {
            throw new IllegalArgumentException("budgetBytes: " + budgetBytes() + " (expected >= segmentBytes "
                    + segmentBytes() + " + " + overhead + " B of metadata"
                    + (persistent() ? " and journal" : "") + " = " + (segmentBytes() + overhead)
                    + "; lower segmentBytes or raise budgetBytes)");
        }
    }

    /**
     * Bytes the disk tier reserves on the file system when it opens, before the first record: the
     * metadata file and, when persistent, the deletion journal (reserved whole with
     * {@code posix_fallocate}; twice the full records the budget holds, within [1024, 2^20]
     * entries). Segments are not among them:
     * each is reserved when a record first needs it, after a check of usable space. Touches no
     * file.
     *
     * @param layout  the block layout
     * @return bytes, {@code > 0}
     * @throws NullPointerException if layout is null
     */
    public long reservedAtOpenBytes(KvLayout layout) {
        java.util.Objects.requireNonNull(layout, "layout");
        return DiskFormat.META_BYTES
                + (persistent() ? DiskFormat.journalBytes(DiskFormat.journalCapacity(budgetBytes(), layout)) : 0);
    }
}
