/**
 * Jlama on TierKV: {@link io.tierkv.jlama.TierKvJlama} installs a {@code KvBlockManager} as the KV
 * cache of a loaded Jlama model, {@link io.tierkv.jlama.JlamaSession} generates with prefix reuse
 * from any tier, and {@link io.tierkv.jlama.StockJlama} runs the same greedy loop on Jlama's own
 * KV for comparison. Runs on the class path with {@code --add-modules jdk.incubator.vector}.
 */
package io.tierkv.jlama;
