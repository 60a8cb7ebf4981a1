/**
 * The disk tier: sealed KV blocks in memory-mapped, {@code posix_fallocate}-reserved segment
 * files, keyed by their 128-bit block hash, checksummed with CRC32C, optionally LZ4-compressed,
 * optionally persistent with a chronicle-bytes deletion journal.
 *
 * <ul>
 *   <li>{@link io.tierkv.tiers.disk.DiskTier}: the tier (design comment at its top).</li>
 *   <li>{@link io.tierkv.tiers.disk.DiskOptions}: validated options;
 *       {@link io.tierkv.tiers.disk.Compression}: the codec choice.</li>
 *   <li>{@link io.tierkv.tiers.disk.DiskFormat}: every byte on disk, with validators.</li>
 *   <li>{@link io.tierkv.tiers.disk.DiskStats}: counters.</li>
 *   <li>{@link io.tierkv.tiers.disk.DiskFaultInjection}: a test hook that damages records on
 *       purpose (fault-injection runs such as {@code tierkv soak --corrupt-rate}).</li>
 * </ul>
 *
 * <h2>JVM flags</h2>
 * chronicle-bytes (the journal) needs, on JDK 25,
 * {@code --add-opens=java.base/sun.nio.ch=ALL-UNNAMED} and
 * {@code --add-opens=java.base/java.lang.reflect=ALL-UNNAMED} (without them opening a persistent
 * tier fails inside {@code MappedBytes}), and {@code --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED}
 * (without it chronicle logs a warning and uses its fallback buffer cleaner); the libc calls need
 * {@code --enable-native-access=ALL-UNNAMED} (or {@code =io.tierkv.natives} on the module path).
 * The root {@code pom.xml} keeps them in {@code tierkv.jvm.flags}.
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
 *   <li>Recovery ({@code tierkv restart-bench}, cold files): the header walk is read ahead
 *       ({@link io.tierkv.tiers.disk.RecoveryReadAhead}, {@code MADV_WILLNEED}): segments of records
 *       up to 64 KiB whole, in windows ahead of the walk; longer records at their next 64 header
 *       pages. Before, one synchronous 4 KiB fault per header (5-12 k records/s at any size); now
 *       0.76 of the faster of a sequential read and a header-only pread at 1e6 records of 4 KiB
 *       blocks, 0.17-0.35 of the header reads with 256 KiB blocks (BENCHMARKS.md).</li>
 * </ul>
 */
package io.tierkv.tiers.disk;
