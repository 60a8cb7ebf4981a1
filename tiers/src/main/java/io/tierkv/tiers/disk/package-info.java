/**
 * What a user of the disk tier configures and reads back. The disk tier keeps sealed KV blocks
 * below the pinned-host tier in memory-mapped segment files under a byte budget, keyed by their
 * 128-bit block hash, checksummed with CRC32C (a damaged record is a counted miss, never served),
 * optionally LZ4-compressed, and optionally persistent: its files kept on close and recovered on
 * the next open.
 *
 * <ul>
 *   <li>{@link io.tierkv.tiers.disk.DiskOptions}: validated options (directory, budget, segment
 *       size, compression, persistence, admission on second sight, compaction threshold,
 *       layout-mismatch wipe, low-space warning), given to
 *       {@link io.tierkv.tiers.KvBlockManagerBuilder#disk};
 *       {@link io.tierkv.tiers.disk.Compression}: the codec choice.</li>
 *   <li>{@link io.tierkv.tiers.disk.DiskStats}: the tier's counters, in
 *       {@link io.tierkv.tiers.TierStats#disk()}.</li>
 * </ul>
 *
 * <h2>Choosing options</h2>
 * The budget counts every byte of every file the tier keeps: whole segments (dead bytes
 * included), the metadata and, when persistent, the deletion journal; it must hold one segment
 * plus those ({@link io.tierkv.tiers.disk.DiskOptions#checkFor}). A segment must hold the
 * layout's largest record. Compression is off by default: on real KV blocks LZ4 saves little and
 * costs a lot (the measurements are in {@link io.tierkv.tiers.disk.DiskOptions#at}). The
 * directory belongs to the tier alone (owner-only permissions, locked against a second manager in
 * this JVM or another).
 *
 * <p>The tier itself, its byte format and its design are internal to the module
 * ({@code io.tierkv.tiers.disk.store}, exported only to the command line's module
 * {@code io.tierkv.bench}).
 *
 * <h2>JVM flags</h2>
 * chronicle-bytes (the journal) needs, on JDK 25,
 * {@code --add-opens=java.base/sun.nio.ch=ALL-UNNAMED} and
 * {@code --add-opens=java.base/java.lang.reflect=ALL-UNNAMED} (without them opening a persistent
 * tier fails inside {@code MappedBytes}), and {@code --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED}
 * (without it chronicle logs a warning and uses its fallback buffer cleaner); the libc calls need
 * {@code --enable-native-access=ALL-UNNAMED}. On the module path the same are granted to the
 * modules by name ({@code =chronicle.core}, {@code --enable-native-access=io.tierkv.natives,org.lz4.java});
 * the README's "On the module path" gives the command. The root {@code pom.xml} keeps the class-path
 * set in {@code tierkv.jvm.flags}.
 */
package io.tierkv.tiers.disk;
