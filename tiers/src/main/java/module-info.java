/** Device, pinned-host and disk tiers, the tier manager and the {@code KvBlockManager} facade. */
@SuppressWarnings("requires-automatic")
module io.tierkv.tiers {
    requires transitive io.tierkv.core;
    requires transitive io.tierkv.natives;
    requires HdrHistogram;
    requires jdk.jfr;
    requires org.lz4.java;
    requires chronicle.bytes;
    requires chronicle.core;
    requires static com.google.errorprone.annotations; // @GuardedBy: compile time only

    exports io.tierkv.tiers;
    exports io.tierkv.tiers.disk;
    // The disk tier itself, its byte format and its test hooks: the command line's benchmarks and
    // fault-injection runs open a tier on their own; no library user does.
    exports io.tierkv.tiers.disk.store to io.tierkv.bench;
    exports io.tierkv.tiers.events;
}
