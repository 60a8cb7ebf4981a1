package io.tierkv.core.error;

/**
 * An allocation would take a cache or a pool over its byte budget on one tier.
 */
public final class BudgetExceededException extends TierKvException {

    private static final long serialVersionUID = 1L;

    private final String budget;
    private final long requestedBytes;
    private final long usedBytes;
    private final long budgetBytes;

    /**
     * Creates the exception.
     *
     * @param budget         which budget, for example {@code cache[tenant-a].device}
     * @param requestedBytes bytes the allocation asked for
     * @param usedBytes      bytes already charged to the budget
     * @param budgetBytes    the budget's limit in bytes
     */
    public BudgetExceededException(String budget, long requestedBytes, long usedBytes, long budgetBytes) {
        super(budget + " budget exceeded: requested " + requestedBytes + " B with " + usedBytes
                + " B used of " + budgetBytes + " B", null);
        this.budget = budget;
        this.requestedBytes = requestedBytes;
        this.usedBytes = usedBytes;
        this.budgetBytes = budgetBytes;
    }

    /** {@return the budget's name} */
    public String budget() {
        return budget;
    }

    /** {@return bytes requested} */
    public long requestedBytes() {
        return requestedBytes;
    }

    /** {@return bytes already used} */
    public long usedBytes() {
        return usedBytes;
    }

    /** {@return the limit in bytes} */
    public long budgetBytes() {
        return budgetBytes;
    }
}
