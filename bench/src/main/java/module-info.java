/** The {@code tierkv} command line and the benchmarks. */
@SuppressWarnings("requires-automatic")
module io.tierkv.bench {
    requires transitive io.tierkv.core;
    requires io.tierkv.tiers;
    requires io.tierkv.observe;
    requires io.tierkv.remote;
    requires lettuce.core;
    requires info.picocli;
    requires com.fasterxml.jackson.databind;
    requires HdrHistogram;
    requires org.knowm.xchart;
    requires java.desktop;
    requires jdk.management;
    requires msgpack.core;
    requires jmh.core;
    requires io.netty.buffer;
    requires org.lz4.java;
    requires ehcache;
    requires ohc.core;
    requires static com.google.errorprone.annotations; // @GuardedBy: compile time only
    exports io.tierkv.bench.model;
    exports io.tierkv.bench.trace;
    exports io.tierkv.bench.sim;
    exports io.tierkv.bench.jmh;
    opens io.tierkv.bench.cli to info.picocli, com.fasterxml.jackson.databind;
}
