package io.tierkv.tiers.disk.store;

/** Receives the keys the tier dropped on its own (budget evictions, {@link DiskMaintenance#evict}, quarantine). */
@FunctionalInterface
public interface EvictionListener {
    /**
     * A record left the disk tier without the caller asking for that key.
     *
     * @param hashHi block hash, high 64 bits
     * @param hashLo block hash, low 64 bits
     */
    void evicted(long hashHi, long hashLo);
}
