/** Device, pinned-host and disk tiers, the tier manager and the {@code KvBlockManager} facade. */
@SuppressWarnings("requires-automatic")
module io.tierkv.tiers {
    requires transitive io.tierkv.core;
    requires io.tierkv.natives;
    requires jdk.jfr;
    requires org.lz4.java;
    requires chronicle.bytes;

    exports io.tierkv.tiers.disk;
}
