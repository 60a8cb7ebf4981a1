/** The {@code tierkv} command line and the benchmarks. */
module io.tierkv.bench {
    requires transitive io.tierkv.core;
    requires io.tierkv.tiers;
    requires info.picocli;
    exports io.tierkv.bench.model;
}
