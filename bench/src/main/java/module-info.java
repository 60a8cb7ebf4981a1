/** The {@code tierkv} command line and the benchmarks. */
module io.tierkv.bench {
    requires io.tierkv.tiers;
    requires info.picocli;
}
