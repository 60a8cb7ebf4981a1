/** Device, pinned-host and disk tiers, the tier manager and the {@code KvBlockManager} facade. */
module io.tierkv.tiers {
    requires transitive io.tierkv.core;
    requires io.tierkv.natives;
}
