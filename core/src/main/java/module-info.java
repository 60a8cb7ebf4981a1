/**
 * TierKV's backend-neutral block model: layouts, slab block pools, block tables, prefix hashing,
 * reference counts and copy-on-write, eviction policies, budgets and errors, and the tier-store SPI
 * ({@code io.tierkv.core.spi}, exported only to the modules that implement or wire a store). JDK only
 * at run time ({@code jdk.management} for the container memory limit that {@code MachineMemory}
 * reads); Error Prone's annotations ({@code @GuardedBy}) are read by the compiler alone.
 */
module io.tierkv.core {
    requires jdk.management;
    requires static com.google.errorprone.annotations; // @GuardedBy: compile time only

    exports io.tierkv.core;
    exports io.tierkv.core.error;
    exports io.tierkv.core.policy;
    exports io.tierkv.core.pool;
    exports io.tierkv.core.prefix;
    exports io.tierkv.core.cache;
    exports io.tierkv.core.budget;
    exports io.tierkv.core.pressure;
    exports io.tierkv.core.spi to io.tierkv.tiers, io.tierkv.remote, io.tierkv.bench;
    exports io.tierkv.core.event;
}
