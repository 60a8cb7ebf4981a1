/**
 * A small Llama-architecture model runtime whose KV cache sits behind {@link io.tierkv.bench.model.KvStore}:
 * the llama2.c checkpoint and tokenizer readers, the float32 forward pass with greedy decoding,
 * and two stores: plain Java arrays ({@link io.tierkv.bench.model.ArrayKvStore}, the reference)
 * and off-heap paged blocks in the TierKV block layout ({@link io.tierkv.bench.model.PagedKvStore}).
 *
 * <p>The numerics follow Andrej Karpathy's llama2.c {@code run.c} (MIT) operation by operation,
 * so greedy tokens match its output and the oracle in {@code shared/data/models/stories260K}.
 */
package io.tierkv.bench.model;
