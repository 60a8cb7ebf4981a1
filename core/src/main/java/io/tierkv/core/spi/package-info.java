/**
 * The tier-store SPI: what a tier below the host implements so the tier manager can use it
 * without depending on the store's client library. Exported only to the modules that implement
 * or wire a store ({@code tiers}, {@code remote}, {@code bench}).
 *
 * <p>A {@link io.tierkv.core.spi.BlockStore} is a leaf store keyed by block hash: it is told what
 * to look up, store and load, returns what it found, and never calls another tier or back into
 * the manager. It never decides residency: the manager does. The shape follows vLLM's offloading
 * manager ({@code vllm/v1/kv_offload/abstract.py}: lookup counting leading hits, store, load),
 * with prepare and complete folded into one call each because a keyed network store has no
 * slot to reserve before the copy: each call is synchronous, bounded by the store's own timeout,
 * and made by the manager with every lock released.
 */
package io.tierkv.core.spi;
