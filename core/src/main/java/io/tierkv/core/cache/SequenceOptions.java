package io.tierkv.core.cache;

import io.tierkv.core.budget.Budgets;

/**
 * Per-sequence (per-cache) settings.
 *
 * @param salt              cache salt mixed into every block hash (tenant isolation); may be empty
 * @param extraKeys         extra hash keys (model id, adapter id); copied, never null
 * @param priority          retention priority for {@code priority-lru}; higher is kept longer;
 *                          {@value #MIN_PRIORITY}..{@value #MAX_PRIORITY} (kept in one byte per block)
 * @param budgetBytes       most bytes of blocks this sequence's table may reference, over all tiers, > 0
 * @param budgets           per-tier budgets of this cache (device, host, transfer staging, disk),
 *                          or {@code null} for none beyond the manager's pools; checked against the
 *                          manager's pools when the sequence opens and enforced at each new block
 *                          (see {@link Sequence#appendToken})
 */
public record SequenceOptions(String salt, long[] extraKeys, int priority, long budgetBytes, Budgets budgets) {

    /** Lowest retention priority: -128. */
    public static final int MIN_PRIORITY = Byte.MIN_VALUE;

    /** Highest retention priority: 127. */
    public static final int MAX_PRIORITY = Byte.MAX_VALUE;

    /**
     * Validates and copies.
     *
     * @throws IllegalArgumentException naming the field, value and bound
     */
    public SequenceOptions {
        if (salt == null) {
            throw new IllegalArgumentException("salt: null (expected a string, empty for none)");
        }
        if (extraKeys == null) {
            throw new IllegalArgumentException("extraKeys: null (expected an array, empty for none)");
        }
        extraKeys = extraKeys.clone();
        if (priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
            throw new IllegalArgumentException("priority: " + priority + " (expected " + MIN_PRIORITY
                    + " <= priority <= " + MAX_PRIORITY + ")");
        }
        if (budgetBytes <= 0) {
            throw new IllegalArgumentException("budgetBytes: " + budgetBytes + " (expected > 0)");
        }
    }

    /**
     * Options with a cache salt and defaults for the rest.
     *
     * @param salt the cache salt
     * @return options with that salt, no extra keys, priority 0 and no budgets beyond the pools
     */
    public static SequenceOptions salt(String salt) {
        return new SequenceOptions(salt, new long[0], 0, Long.MAX_VALUE, null);
    }

    /** {@return options with no salt} */
    public static SequenceOptions defaults() {
        return salt("");
    }

    /**
     * Returns a validated copy with a new {@code priority}.
     *
     * @param value retention priority, {@value #MIN_PRIORITY}..{@value #MAX_PRIORITY}
     * @return a copy
     * @throws IllegalArgumentException if value is out of range (naming the field, value and bounds)
     */
    public SequenceOptions withPriority(int value) {
        return new SequenceOptions(salt, extraKeys, value, budgetBytes, budgets);
    }

    /**
     * Returns a validated copy with a new {@code budgetBytes}.
     *
     * @param value most bytes this sequence's table may reference
     * @return a validated copy
     */
    public SequenceOptions withBudgetBytes(long value) {
        return new SequenceOptions(salt, extraKeys, priority, value, budgets);
    }

    /**
     * Returns a copy with per-tier budgets for this cache. The manager checks them against its
     * pools when the sequence opens ({@code KvBlockManager.openSequence}).
     *
     * @param value device, host, transfer and disk budgets of this cache, or {@code null} for none
     * @return a copy
     */
    public SequenceOptions withBudgets(Budgets value) {
        return new SequenceOptions(salt, extraKeys, priority, budgetBytes, value);
    }

    /**
     * Returns a validated copy with a new {@code extraKeys}.
     *
     * @param value extra hash keys
     * @return a copy
     */
    public SequenceOptions withExtraKeys(long... value) {
        return new SequenceOptions(salt, value, priority, budgetBytes, budgets);
    }

    /** {@return a copy of the extra keys} */
    @Override
    public long[] extraKeys() {
        return extraKeys.clone();
    }
}
