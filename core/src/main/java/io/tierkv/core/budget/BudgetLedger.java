package io.tierkv.core.budget;

import io.tierkv.core.error.BudgetExceededException;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Bytes charged against {@link Budgets}, one counter per kind. Shared by every manager of a pool;
 * thread-safe and lock-free (compare-and-set per charge).
 */
public final class BudgetLedger {

    private final String name;
    private final Budgets budgets;
    private final AtomicLongArray used = new AtomicLongArray(BudgetKind.values().length);

    /**
     * Creates a ledger with nothing charged.
     *
     * @param name    name for messages, for example {@code pool}
     * @param budgets the limits
     */
    public BudgetLedger(String name, Budgets budgets) {
        this.name = name;
        this.budgets = budgets;
    }

    /**
     * Charges bytes, all or nothing.
     *
     * @param kind  the budget kind
     * @param bytes bytes to charge, >= 0
     * @throws BudgetExceededException if the charge would pass the limit; nothing is charged
     * @throws IllegalArgumentException if bytes is negative
     */
    public void charge(BudgetKind kind, long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes: " + bytes + " (expected >= 0)");
        }
        long limit = budgets.bytes(kind);
        int i = kind.ordinal();
        for (;;) {
            long now = used.get(i);
            if (now + bytes > limit) {
                throw new BudgetExceededException(name + "." + Budgets.field(kind), bytes, now, limit);
            }
            if (used.compareAndSet(i, now, now + bytes)) {
                return;
            }
        }
    }

    /**
     * Returns bytes charged earlier.
     *
     * @param kind  the budget kind
     * @param bytes bytes to return, at most what is charged
     * @throws IllegalStateException if more would be returned than is charged; nothing changes
     */
    public void release(BudgetKind kind, long bytes) {
        int i = kind.ordinal();
        for (;;) {
            long now = used.get(i);
            if (bytes < 0 || bytes > now) {
                throw new IllegalStateException(name + "." + Budgets.field(kind) + ": release of " + bytes
                        + " B with " + now + " B charged");
            }
            if (used.compareAndSet(i, now, now - bytes)) {
                return;
            }
        }
    }

    /**
     * Returns the bytes charged now for one kind.
     *
     * @param kind the budget kind
     * @return bytes charged now
     */
    public long usedBytes(BudgetKind kind) {
        return used.get(kind.ordinal());
    }

    /** {@return the limits} */
    public Budgets budgets() {
        return budgets;
    }
}
