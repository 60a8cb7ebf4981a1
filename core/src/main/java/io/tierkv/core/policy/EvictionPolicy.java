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
 * <p>Implementations keep their state in primitive arrays sized once at construction and
 * allocate nothing on the heap per call. They are not thread-safe: the owner serialises calls.
 */
public interface EvictionPolicy {

    /** @return the registry name of this policy, for example {@code lru} */
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
     * @param blockId block id in [0, capacity)
     * @return whether the block is currently a candidate
     */
    boolean contains(int blockId);

    /** @return the number of candidates */
    int size();

    /** @return the largest block id + 1 this policy accepts */
    int capacity();
}
