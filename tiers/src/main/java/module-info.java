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

    exports io.tierkv.tiers;
    exports io.tierkv.tiers.disk;
    exports io.tierkv.tiers.events;
}
