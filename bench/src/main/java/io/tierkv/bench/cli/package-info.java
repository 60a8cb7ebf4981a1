/**
 * The {@code tierkv} command line: {@code tierkv replay} (serving traces through a real
 * {@link io.tierkv.tiers.KvBlockManager}), {@code tierkv decode} (the stories260K model with its
 * K/V in TierKV) and {@code tierkv simulate} (the eviction-policy simulator). {@link TierKvCli}
 * is the entry point of {@code bench/target/tierkv.jar} and of the {@code bench/tierkv} script.
 */
package io.tierkv.bench.cli;
