package io.tierkv.tiers.events;

import io.tierkv.core.event.KvBlockHash;
import io.tierkv.core.event.KvMedium;
import java.util.Objects;

/**
 * One KV event, as vLLM's {@code vllm.distributed.kv_events} defines them: a block became
 * findable in a tier ({@link BlockStored}), stopped being findable there ({@link BlockRemoved}),
 * or nothing is findable any more ({@link AllBlocksCleared}). Each {@link BlockStored} and
 * {@link BlockRemoved} names one block. Immutable and thread-safe.
 */
public sealed interface KvEvent {

    /**
     * A block became findable in a tier.
     *
     * @param hash            the block's 128-bit hash
     * @param parentHash      the hash of the block before it in its sequence, or null for a first block
     * @param tokenIds        the block's token ids, {@code blockSizeTokens} of them; not copied, do not change
     * @param blockSizeTokens B, tokens per block
     * @param medium          the tier
     */
    record BlockStored(KvBlockHash hash, KvBlockHash parentHash, int[] tokenIds, int blockSizeTokens,
            KvMedium medium) implements KvEvent {

        /**
         * Validates.
         *
         * @throws NullPointerException if hash, tokenIds or medium is null
         */
        public BlockStored {
            Objects.requireNonNull(hash, "hash");
            Objects.requireNonNull(tokenIds, "tokenIds");
            Objects.requireNonNull(medium, "medium");
        }
    }

    /**
     * A block stopped being findable in a tier.
     *
     * @param hash   the block's 128-bit hash
     * @param medium the tier
     */
    record BlockRemoved(KvBlockHash hash, KvMedium medium) implements KvEvent {

        /**
         * Validates.
         *
         * @throws NullPointerException if hash or medium is null
         */
        public BlockRemoved {
            Objects.requireNonNull(hash, "hash");
            Objects.requireNonNull(medium, "medium");
        }
    }

    /** Nothing is findable in any tier any more (sent when the manager closes). */
    record AllBlocksCleared() implements KvEvent {
    }
}
