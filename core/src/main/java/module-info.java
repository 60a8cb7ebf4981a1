/**
 * TierKV's backend-neutral block model: layouts, slab block pools, block tables, prefix hashing,
 * reference counts and copy-on-write, eviction policies, budgets and errors. JDK only
 * ({@code jdk.management} for the container memory limit that {@code MachineMemory} reads).
 */
module io.tierkv.core {
    requires jdk.management;

    exports io.tierkv.core;
    exports io.tierkv.core.error;
    exports io.tierkv.core.policy;
    exports io.tierkv.core.pool;
    exports io.tierkv.core.prefix;
    exports io.tierkv.core.cache;
    exports io.tierkv.core.budget;
    exports io.tierkv.core.pressure;
    exports io.tierkv.core.event;
}
