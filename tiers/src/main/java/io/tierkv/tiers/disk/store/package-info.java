/**
 * The disk tier's implementation, internal to the module: sealed KV blocks in memory-mapped,
 * {@code posix_fallocate}-reserved segment files, keyed by their 128-bit block hash, checksummed
 * with CRC32C, optionally LZ4-compressed, optionally persistent with a chronicle-bytes deletion
 * journal. What a user configures and reads back ({@link io.tierkv.tiers.disk.DiskOptions},
 * {@link io.tierkv.tiers.disk.Compression}, {@link io.tierkv.tiers.disk.DiskStats}) is in
 * {@link io.tierkv.tiers.disk}; the tier manager ({@code io.tierkv.tiers}) opens the tier. This
 * package is exported only to {@code io.tierkv.bench}, whose benchmarks, restart bench and
 * fault-injection soak open a tier and read its files on their own.
 *
 * <ul>
 *   <li>{@link io.tierkv.tiers.disk.store.DiskTier}: the tier (the design of the tier below; its own comment keeps what a caller relies on).</li>
 *   <li>{@link io.tierkv.tiers.disk.store.DiskFormat}: every byte on disk, with validators.</li>
 *   <li>{@link io.tierkv.tiers.disk.store.RecordPins} and
 *       {@link io.tierkv.tiers.disk.store.DiskMaintenance}: the tier manager's pins on records
 *       and its maintenance calls (eviction, compaction, key walk, page-cache drop).</li>
 *   <li>{@link io.tierkv.tiers.disk.store.DiskFaultInjection}: a test hook that damages records on
 *       purpose (fault-injection runs such as {@code tierkv soak --corrupt-rate}).</li>
 * </ul>
 *
 * <h2>Design of the tier</h2>
 * <h3>Terms</h3>
 * <ul>
 *   <li><b>record</b>: one stored block: a 64-byte header, the block's identity (context, parent
 *       hash, token ids: {@link io.tierkv.core.prefix.BlockIdentity}), the payload (raw or LZ4), padding to 64 bytes.
 *       Byte layout and validators: {@link DiskFormat}. A key (hash) only finds a record: every
 *       read, match and put compares the stored identity with the caller's, and a record of another
 *       identity is a counted collision, never served and never taken for the caller's block.</li>
 *   <li><b>segment</b>: a file of {@link io.tierkv.tiers.disk.DiskOptions#segmentBytes()} bytes, reserved whole with
 *       {@code posix_fallocate} before it is mapped whole ({@code FileChannel.map} into a shared
 *       {@link java.lang.foreign.Arena} per segment). Records are appended at its high-water mark.</li>
 *   <li><b>live / dead</b>: a record the index points to is live; an evicted, removed or
 *       quarantined record stays in its segment as dead bytes until the segment is emptied
 *       (deleted) or compacted.</li>
 *   <li><b>nonce</b>: a random number in the segment header, copied into each record it holds;
 *       compaction in place gives the segment a new nonce, so records of its earlier life are
 *       recognisably stale after a crash.</li>
 * </ul>
 *
 * <h3>Bytes</h3>
 * <pre>
 * directory/ tierkv-disk.lock   file lock: one manager per directory (in this JVM and others)
 *            tierkv-disk.meta   layout fingerprint and fields (64 B)
 *            deletions.journal  persistent mode only: deleted records (chronicle-bytes MappedBytes)
 *            seg-0000000007.tkv
 *              +--------+------------------+------------------+-----+------------- - - -+
 *              | header | record           | record (dead)    | ... | reserved, zero     |
 *              | 64 B   | hdr|ident|payload| hdr|ident|payload|     |                    |
 *              +--------+------------------+------------------+-----+------------- - - -+
 *              0        64                                    high-water mark     segmentBytes
 * </pre>
 * The budget counts every byte of every file the tier keeps ({@link DiskTier#usedBytes()} equals the sum
 * of their sizes), so a segment counts whole from its creation, dead bytes included.
 *
 * <h3>Paths</h3>
 * Spill ({@link DiskTier#put}, {@code RecordWriter}): encode (LZ4 and optional shuffle, raw when it does
 * not save 1/32), find room, checksum and write the payload in one pass a chunk at a time (into
 * the mapping where the segment's pages were written before and are all in the page cache
 * ({@code mincore}), else positional {@code FileChannel} writes: a copy into a page that is not
 * cached reads it from the device first), then the header and identity, advance the mark (a
 * checksummed field of the segment header), index the record as most recently used. Load ({@link DiskTier#get}, {@code RecordReader}): for a record
 * some of whose pages are not in the page cache, advise {@code MADV_WILLNEED} on it (mappings
 * carry {@code MADV_RANDOM}, so exactly the record's pages are read; resident records skip the
 * advice, which costs about 18 us per warm 1 MiB load, against 2-3 us for the check), validate the
 * header against the index, then copy a raw payload out of the mapping into the caller's block a
 * chunk at a time and checksum each chunk in the destination while it is in cache; a mismatch
 * zeroes the destination before the miss returns. An LZ4 payload is verified in the mapping, then
 * decompressed into the caller's memory. The package overview gives the measurements.
 *
 * <h3>Eviction and compaction ({@code SpaceManager}, {@code Compactor})</h3>
 * When a record does not fit the active segment: another segment with room becomes active; else
 * a new segment is created if the budget allows; else the segment with the lowest kept ratio (live
 * bytes plus bytes evicted from it since its last compaction, over its record space) is compacted
 * in place (live records slid to its front, new nonce) if that ratio is below
 * {@link io.tierkv.tiers.disk.DiskOptions#compactBelowLiveRatio()} and it frees enough; else the least recently used
 * unpinned record is evicted (reported to the {@link EvictionListener}) and the steps repeat. A segment that
 * this eviction empties is recycled in place (new nonce, empty, active): its file, pages and
 * mapping are reused rather than deleted and reserved anew. Counting evicted bytes as kept means
 * holes made by eviction, which sit next to the records next in line for it, are never compacted
 * away (that would copy each record once more before evicting it); holes made by removal or
 * quarantine are. Any other segment whose last live record goes is deleted at once.
 *
 * <p>Pins ({@link RecordPins#pin}, {@link DiskTier#putPinned}): the manager pins the record of a block that an open
 * sequence references, since the record may be that block's only copy. A pin names one record:
 * the serial its pinning got with the record's first pin (kept while any pin is held, unique over
 * the tier's life) is the handle that {@link RecordPins#unpin} takes back, so a pin never releases
 * another record that came to hold the same key later. Only a pinned record has a serial and a pin
 * count, in entries of its own, not in the per-record arrays (heap per record: {@code RecordIndex}).
 * A pinned record is off the LRU list, so it is never a victim (for room, by budget or by
 * {@link DiskMaintenance#evict}). Removal and quarantine still drop it; its pins become <em>broken pins</em>
 * ({@link RecordPins#pinBroken}, answered without the lock), each released by its holder's {@code unpin}
 * as any other, touching no record. Before evicting anything for room the
 * tier checks that some segment could hold the new record once its unpinned records were gone (or
 * the budget allows a new segment); when none can, the put is refused with
 * {@link io.tierkv.core.error.CapacityExhaustedException} ({@link io.tierkv.tiers.disk.DiskStats#pinRefusals()}) and nothing is evicted. A
 * segment whose remaining live records are all pinned is compacted as soon as that frees the room,
 * since eviction could never empty it.
 *
 * <h3>Persistence and recovery ({@code Recovery})</h3>
 * Persistent mode appends every deletion to the journal before it takes effect in memory. Opening
 * rebuilds the index from record headers (header checksum, layout fingerprint, nonce, bounds),
 * following the chain in which each header names the record before it, so an intact segment costs
 * one header read per record and a record's inside is read only where the chain breaks
 * ({@link io.tierkv.tiers.disk.DiskStats#recoveryInsideScans()}), skips journal-deleted records and duplicates,
 * resynchronises at the next 64-byte boundary after
 * damaged bytes (each damaged run counted in {@link io.tierkv.tiers.disk.DiskStats#recoveryFaults()}), drops a segment
 * whose header is damaged, treats bytes past a truncated file's end as torn, and then rewrites the
 * journal (a journal that already holds just the entries kept, with the capacity asked for, is
 * opened in place; metadata that would be written with the same bytes is left alone). Payload checksums are verified on first read, not at open. Recovered records are
 * indexed oldest segment first as least recently used, and {@link DiskMaintenance#forEachKey} reports them.
 *
 * <p>The JVM flags the tier needs are in the {@linkplain io.tierkv.tiers.disk public package's
 * overview}.
 *
 * <h2>Measured choices</h2>
 * From the {@code DiskPathMeasurement} tool in this package's tests, on the 2-core development
 * VMs (shared, so ranges; 256 KiB to 2 MiB blocks, medians of interleaved repetitions):
 * <ul>
 *   <li>Spill: the payload is checksummed and copied in one pass, 128 KiB at a time, into the
 *       mapping where the segment's pages exist (a recycled segment), else with positional
 *       {@code FileChannel} writes (copying into a fresh mapping faults every page: 0.12 of a
 *       bare write). Segments emptied by eviction are recycled, and holes made by eviction are
 *       not compacted, so a full tier's steady state writes each byte once
 *       ({@code SpillLoadBenchmark}: 0.25-0.31 of the faster plain write before, see
 *       BENCHMARKS.md for after).</li>
 *   <li>Load: copy out of the mapping after {@code MADV_WILLNEED} where {@code mincore} finds
 *       pages of the record missing from the page cache (on resident pages the advice costs about
 *       18 us per 1 MiB, the check 2-3 us), the mapping advised {@code MADV_RANDOM},
 *       checksumming each 128 KiB chunk in the destination right after it is copied. Cold (page
 *       cache dropped, {@code SpillLoadBenchmark.loadCold}): device-bound, reading the record's
 *       bytes once; without the advice a page per fault (about 0.03 GB/s). Warm: bounded by the
 *       CRC32C pass (every byte is verified before the call returns a hit); positional channel
 *       reads measured no faster warm and read 3.5 bytes per byte asked cold (read-ahead).</li>
 *   <li>Spill into a recycled segment whose pages the page cache no longer holds: positional
 *       writes, as into a fresh segment, in chunks that end on 128 KiB file offsets (a copy into
 *       the mapping read every page from the device first: 28 ms per cold 1 MiB spill; chunks cut
 *       from the payload's start read one page each; now 0.82 ms, three pages read).</li>
 *   <li>Compression: none by default. Real KV blocks of stories260K decodes (F32,
 *       {@code SpillLoadBenchmark data=realkv}): the tier stores them at raw / stored 1.006-1.024
 *       with LZ4 alone and 1.14-1.17 with the shuffle in 4-byte lanes (lz4-java alone: 1.04-1.05
 *       unshuffled, 1.05-1.06 in 2-byte lanes), and the shuffled spill and load take 7.5-15.5
 *       times a raw one's time warm, 1.6-3.4 times cold (see
 *       {@link io.tierkv.tiers.disk.DiskOptions#at}).
 *       Synthetic: F16 normal 0.996 either way, BF16 normal 1.19 shuffled, random 0.996, zeros
 *       254. The shuffle width is the layout's element size (2 or 4 bytes); both run at about
 *       2-3 GB/s. A block whose first 64 KiB do not compress is stored raw without compressing
 *       the rest.</li>
 *   <li>Recovery ({@code tierkv restart-bench}, cold files): segments of records up to 64 KiB
 *       are read with sequential positional reads up to the mark, 256 KiB at a time, into one
 *       buffer whose headers the walk parses ({@link io.tierkv.tiers.disk.store.RecoveryWindow});
 *       segments of longer records are walked on the mapping with their next 64 header pages
 *       advised ({@link io.tierkv.tiers.disk.store.RecoveryReadAhead}, {@code MADV_WILLNEED}).
 *       Before any read-ahead, one synchronous 4 KiB fault per header (5-12 k records/s at any
 *       size); with {@code MADV_WILLNEED} for short records too, 0.76 of the faster of a sequential
 *       read and a header-only pread at 1e6 records of 4 KiB blocks but 1.7-2.7 at 1e4-1e5, where
 *       the advice calls blocked and the open rewrote its journal and metadata; with the buffer
 *       and no rewrite of unchanged files 1.18-1.46 at 1e5 and 1.14-2.16 at 1e4 (BENCHMARKS.md,
 *       "Cold restart: positional reads"). 0.17-0.45 of the header reads with 256 KiB blocks.</li>
 * </ul>
 */
package io.tierkv.tiers.disk.store;
