/**
 * JMH microbenchmarks, each beside a peer or a physical limit measured in the same run.
 *
 * <p>Built into {@code bench/target/benchmarks.jar} (Main-Class {@code org.openjdk.jmh.Main});
 * every fork runs with {@code --enable-native-access=ALL-UNNAMED}. Figures and the commands that
 * produced them are in {@code BENCHMARKS.md} at the repository root.
 */
package io.tierkv.bench.jmh;
