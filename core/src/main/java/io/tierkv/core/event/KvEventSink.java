package io.tierkv.core.event;

import java.lang.foreign.MemorySegment;

/**
 * Where the tiers report that a block became findable in a tier, or stopped being findable
 * there: the source of vLLM-format KV events ({@code BlockStored}, {@code BlockRemoved}; the
 * manager's event queue adds {@code AllBlocksCleared} when it closes). Each tier calls it from the one place where that fact changes, with
 * its own lock held, so one tier's calls for one hash arrive in the order the facts changed.
 *
 * <p>What "findable" means per medium: {@link KvMedium#GPU}, a sealed block indexed under its
 * hash with a device slot; {@link KvMedium#CPU}, a host slot holds a copy of a block with that
 * hash; {@link KvMedium#DISK}, the disk tier indexes a record under the hash (written, or
 * recovered at open); {@link KvMedium#REMOTE}, the remote store holds a value under the hash. A
 * tier added later reports with the same two calls: a remote store that holds a block now is
 * {@code blockStored(KvMedium.REMOTE, hi, lo, identity)}, one that lost it
 * {@code blockRemoved(KvMedium.REMOTE, hi, lo)}.
 *
 * <p>Implementations must never block and must not call back into the cache or a tier: they are
 * called on the data path under tier locks. {@link #NONE}, the default, does nothing, so a manager
 * without a listener pays one interface call per change. Implementations are thread-safe.
 */
public interface KvEventSink {

    /** A sink that drops every event: the default when no listener is configured. */
    KvEventSink NONE = new KvEventSink() {
        @Override
        public void blockStored(KvMedium medium, long hashHi, long hashLo, MemorySegment identity) {
        }

        @Override
        public void blockRemoved(KvMedium medium, long hashHi, long hashLo) {
        }

        @Override
        public boolean enabled() {
            return false;
        }
    };

    /**
     * A block with this hash became findable in a tier.
     *
     * @param medium   the tier
     * @param hashHi   the block hash, high word
     * @param hashLo   the block hash, low word
     * @param identity the block's identity ({@link io.tierkv.core.prefix.BlockIdentity}: context,
     *                 parent hash, T token ids), a view valid only during the call: copy what is kept
     */
    void blockStored(KvMedium medium, long hashHi, long hashLo, MemorySegment identity);

    /**
     * A block with this hash stopped being findable in a tier.
     *
     * @param medium the tier
     * @param hashHi the block hash, high word
     * @param hashLo the block hash, low word
     */
    void blockRemoved(KvMedium medium, long hashHi, long hashLo);

    /**
     * Tells whether events are wanted, so a caller can skip building an identity view.
     *
     * @return false for {@link #NONE}; true by default
     */
    default boolean enabled() {
        return true;
    }
}
