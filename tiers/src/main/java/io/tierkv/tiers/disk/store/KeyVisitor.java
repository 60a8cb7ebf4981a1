package io.tierkv.tiers.disk.store;

/** Visits keys. */
@FunctionalInterface
public interface KeyVisitor {
    /**
     * Called once per key.
     *
     * @param hashHi block hash, high 64 bits
     * @param hashLo block hash, low 64 bits
     */
    void visit(long hashHi, long hashLo);
}
