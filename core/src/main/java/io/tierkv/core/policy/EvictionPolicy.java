package io.tierkv.core.policy;

/**
 * Orders the candidates of one tier for leaving it (eviction, or demotion to the tier below).
 *
 * <p>Candidates are dense block ids in {@code [0, capacity)}. The owner (a block pool or a tier)
 * decides when a block is a candidate: it calls {@link #onAdmit} when a block becomes one (for
 * example its reference count fell to 0 with a hash, or it fell out of its sequence's recent
 * window), {@link #onRemove} when it stops being one (re-referenced, leased, moved, freed), and
 * {@link #onAccess} on every hit, candidate or not. {@link #victim()} names the best candidate
 * without removing it; the owner then removes it with {@link #onRemove} once the block has left.
 *
 * <p><b>Eviction and history.</b> Removing the id that {@link #victim()} last named counts as that
 * block's eviction: policies that keep history beyond candidacy (LFU counts, S3-FIFO's ghost
 * queue) act on it then. Any other {@link #onRemove} (the block was re-referenced, leased, moved)
 * keeps the block's history, so it is ranked as before when admitted again. Ghost history is keyed
 * by a {@code contentKey} given at admission ({@link #onAdmit(int, int, long)}); an owner that
 * reuses block ids for new content passes a key derived from the block hash, so a reused id is
 * never mistaken for the content that left.
 *
 * <p>Implementations keep their state in primitive arrays sized once at construction and
 * allocate nothing on the heap per call. They are not thread-safe: the owner serialises calls.
 * Registered implementations are created by name through {@link EvictionPolicies}.
 */
public interface EvictionPolicy {

    /**
     * The registry name of this policy.
     *
     * @return the name, for example {@code lru}
     */
    String name();

    /**
     * Makes a block a candidate. Admitting a block that already is one is a caller bug.
     *
     * @param blockId  block id in [0, capacity)
     * @param priority retention priority, higher is kept longer; policies without priorities ignore it
     * @throws IllegalStateException if the block is already a candidate
     * @throws IndexOutOfBoundsException if the id is outside [0, capacity)
     */
    void onAdmit(int blockId, int priority);

    /**
     * Makes a block a candidate and names its content. Policies that remember blocks after they
     * leave (S3-FIFO's ghost queue) key that memory by {@code contentKey}, so content that returns
     * under another block id is recognised, and a reused id is not confused with what it held
     * before. The two-argument {@link #onAdmit(int, int)} uses the block id as the key, which is
     * right when ids are stable names of content. The default ignores the key.
     *
     * @param blockId    block id in [0, capacity)
     * @param priority   retention priority, higher is kept longer; policies without priorities ignore it
     * @param contentKey identity of the block's content, for example 64 bits of its block hash
     * @throws IllegalStateException if the block is already a candidate
     * @throws IndexOutOfBoundsException if the id is outside [0, capacity)
     */
    default void onAdmit(int blockId, int priority, long contentKey) {
        onAdmit(blockId, priority);
    }

    /**
     * Tells whether this policy reads the priority it is admitted with. A cache keeps each block's
     * priority (a byte per block id) only for a policy that does.
     *
     * @return false by default; true for {@link PriorityLruPolicy}
     */
    default boolean readsPriority() {
        return false;
    }

    /**
     * Records a hit on a block, candidate or not.
     *
     * @param blockId block id in [0, capacity)
     * @throws IndexOutOfBoundsException if the id is outside [0, capacity)
     */
    void onAccess(int blockId);

    /**
     * Stops a block being a candidate. Removing a block that is not a candidate does nothing.
     *
     * @param blockId block id in [0, capacity)
     * @throws IndexOutOfBoundsException if the id is outside [0, capacity)
     */
    void onRemove(int blockId);

    /**
     * Names the candidate to leave first, without removing it. May update internal state (for
     * example S3-FIFO moving blocks between its queues, or aging counters).
     *
     * @return the victim's block id, or -1 when there is no candidate
     */
    int victim();

    /**
     * Tells whether a block is a candidate.
     *
     * @param blockId block id in [0, capacity)
     * @return whether the block is currently a candidate
     * @throws IndexOutOfBoundsException if the id is outside [0, capacity)
     */
    boolean contains(int blockId);

    /**
     * The number of candidates.
     *
     * @return the number of candidates
     */
    int size();

    /**
     * The id range of this policy.
     *
     * @return the largest block id + 1 this policy accepts
     */
    int capacity();
}
