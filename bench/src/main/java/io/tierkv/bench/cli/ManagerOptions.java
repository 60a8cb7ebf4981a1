package io.tierkv.bench.cli;

import io.tierkv.tiers.disk.Compression;
import picocli.CommandLine.Option;

/**
 * The options of the {@code KvBlockManager} that every command building one shares, declared once
 * here and added to each command as a picocli {@code @Mixin}: {@code --compression},
 * {@code --recent-blocks} and {@code --movers} (issue 13: they were declared in {@code replay},
 * {@code decode} and {@code soak} with three sets of defaults).
 *
 * <p><b>Defaults: the library's own.</b> A runtime author who reads a figure printed by
 * {@code tierkv} with its defaults expects the manager a runtime gets from
 * {@code KvBlockManager.builder(layout)} and {@code DiskOptions.at(dir)} without tuning, so each
 * default here is the library's (a test, {@code ManagerOptionsTest}, builds a default manager and
 * compares):
 * <ul>
 *   <li>{@code --compression none}: {@code DiskOptions.at}'s {@link Compression#NONE}. On real KV
 *       blocks LZ4 saves 0.6-2.4% unshuffled and 12-14% shuffled at 1.2 to 10.8 times the spill
 *       time ({@code DiskOptions.at}'s javadoc, BENCHMARKS.md "Default: Compression.NONE stays").
 *       Was {@code lz4} in all three commands.</li>
 *   <li>{@code --recent-blocks 2}: the builder's {@code recentDeviceBlocks}. Was 2 in
 *       {@code replay}, 1 in {@code decode} and {@code soak}.</li>
 *   <li>{@code --movers 1}: the builder's {@code movers}, one background mover thread. Was 1 in
 *       {@code replay} and {@code decode}, 2 in {@code soak}.</li>
 * </ul>
 * Documented figures that a changed default would move pass the old value explicitly instead:
 * the README's {@code replay} summary is printed by {@code bench/tierkv replay --compression lz4}
 * (its hit rate does not depend on the codec: 0.7828 with either under {@code --movers 0}; the
 * generator's payload does not compress and is stored raw), and the README's soak commands,
 * whose figures were measured with two movers, 1 recent block and LZ4 records, pass
 * {@code --movers 2 --recent-blocks 1 --compression lz4}.
 *
 * <p>{@code tierkv jlama} (module jlama) declares none of the three: this class is out of its
 * reach (jlama runs on the class path only, sharing a package with Jlama, and does not depend on
 * bench; bench cannot compile against it either), and its manager takes the builder's defaults,
 * which are these.
 *
 * <p>Thread-safety: picocli sets the fields while parsing, on the command's thread; the command
 * reads them afterwards on the same thread.
 */
final class ManagerOptions {

    @Option(names = "--compression", paramLabel = "CODEC", defaultValue = "none",
            description = "disk records: none or lz4 (default: ${DEFAULT-VALUE}, as DiskOptions.at: on real KV blocks "
                    + "LZ4 saves little and costs spill and load time)")
    private Compression compression;

    @Option(names = "--recent-blocks", paramLabel = "N", defaultValue = "2",
            description = "sealed blocks at the end of each open sequence kept on the device, >= 0 (default: "
                    + "${DEFAULT-VALUE}, as KvBlockManagerBuilder)")
    private int recentBlocks;

    @Option(names = "--movers", paramLabel = "N", defaultValue = "1",
            description = "background mover threads, 0..8; 0 = no thread, moves run on demand (replay: one mover "
                    + "cycle on its thread after each request, deterministic) (default: ${DEFAULT-VALUE}, as "
                    + "KvBlockManagerBuilder)")
    private int movers;

    /** Creates the options (picocli instantiates them for each command). */
    ManagerOptions() {
    }

    /**
     * Checks the values, before the command does any work.
     *
     * @throws IllegalArgumentException naming the option as typed, its value and the bound:
     *                                  {@code --recent-blocks -1 (expected >= 0)},
     *                                  {@code --movers 9 (expected 0 <= N <= 8)}
     */
    void check() {
        Check.atLeast("--recent-blocks", recentBlocks, 0);
        Check.between("--movers", movers, 0, 8, "");
    }

    /**
     * The codec of disk records.
     *
     * @return {@code --compression}
     */
    Compression compression() {
        return compression;
    }

    /**
     * Sealed blocks at the end of each open sequence kept on the device.
     *
     * @return {@code --recent-blocks}, {@code >= 0} once {@link #check()} passed
     */
    int recentBlocks() {
        return recentBlocks;
    }

    /**
     * Background mover threads.
     *
     * @return {@code --movers}, 0..8 once {@link #check()} passed
     */
    int movers() {
        return movers;
    }
}
