package io.tierkv.core.policy;

import java.util.Objects;

/**
 * What every registered policy shares: the capacity check, id bounds checks, the double-admission
 * check and the record of the last victim named (removing it counts as its eviction, see
 * {@link EvictionPolicy}). Package-private: callers use the interface or the concrete classes.
 */
abstract class AbstractPolicy implements EvictionPolicy {

    /** Largest id range accepted: keeps every per-id array within the JVM's array limit. */
    static final int MAX_CAPACITY = Integer.MAX_VALUE - 8;

    private final String name;
    private final int capacity;
    /** The id {@link #victim()} last named and that has not changed since, or -1. */
    int lastVictim = IntrusiveLists.NIL;

    /**
     * Names the policy and checks its capacity.
     *
     * @param name     registry name
     * @param capacity number of block ids
     */
    AbstractPolicy(String name, int capacity) {
        this.name = name;
        this.capacity = checkCapacity(capacity);
    }

    /**
     * Checks a capacity.
     *
     * @param capacity number of block ids
     * @return {@code capacity}
     * @throws IllegalArgumentException if it is not in {@code [1, MAX_CAPACITY]}
     */
    static int checkCapacity(int capacity) {
        if (capacity <= 0 || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException(
                    "capacity: " + capacity + " (expected 1.." + MAX_CAPACITY + " block ids)");
        }
        return capacity;
    }

    /**
     * Checks a block id.
     *
     * @param blockId a block id
     * @return {@code blockId}
     * @throws IndexOutOfBoundsException if it is outside [0, capacity)
     */
    final int checkId(int blockId) {
        return Objects.checkIndex(blockId, capacity);
    }

    /**
     * The error for a second admission.
     *
     * @param blockId the block admitted twice
     * @return the exception to throw
     */
    final IllegalStateException alreadyCandidate(int blockId) {
        return new IllegalStateException(
                name + ": block " + blockId + " is already a candidate (admitted twice)");
    }

    /**
     * Forgets the last victim if it is {@code blockId} and reports whether it was: a removal of
     * the last victim is its eviction.
     *
     * @param blockId the block being removed
     * @return whether it was the last victim named
     */
    final boolean consumeVictim(int blockId) {
        if (blockId == lastVictim) {
            lastVictim = IntrusiveLists.NIL;
            return true;
        }
        return false;
    }

    @Override
    public void onAdmit(int blockId, int priority) {
        onAdmit(blockId, priority, blockId);
    }

    @Override
    public abstract void onAdmit(int blockId, int priority, long contentKey);

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final int capacity() {
        return capacity;
    }

    @Override
    public String toString() {
        return name + "[size=" + size() + ", capacity=" + capacity + "]";
    }
}
