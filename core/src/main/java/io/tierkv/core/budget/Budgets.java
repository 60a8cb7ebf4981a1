package io.tierkv.core.budget;

/**
 * Byte budgets for the four kinds, for one cache (a sequence or session) or for a pool (the
 * process, shared by several managers). Finite and validated: an invalid instance cannot exist.
 *
 * @param deviceBytes   device block memory, in (0, 2^60]
 * @param hostBytes     pinned host memory, in (0, 2^60]
 * @param transferBytes transfer staging memory, in (0, 2^60]
 * @param diskBytes     bytes on disk, in (0, 2^60]
 */
public record Budgets(long deviceBytes, long hostBytes, long transferBytes, long diskBytes) {

    /** Largest budget accepted: 1 EiB, far above any machine, still finite. */
    public static final long MAX_BYTES = 1L << 60;

    /**
     * Validates.
     *
     * @throws IllegalArgumentException naming the field, its value and the bound
     */
    public Budgets {
        check("deviceBytes", deviceBytes);
        check("hostBytes", hostBytes);
        check("transferBytes", transferBytes);
        check("diskBytes", diskBytes);
    }

    /**
     * Returns the limit of one budget kind.
     *
     * @param kind a budget kind
     * @return the limit in bytes for that kind
     */
    public long bytes(BudgetKind kind) {
        return switch (kind) {
            case DEVICE -> deviceBytes;
            case HOST -> hostBytes;
            case TRANSFER -> transferBytes;
            case DISK -> diskBytes;
        };
    }

    /**
     * Checks that these (per-cache) budgets fit inside a pool's.
     *
     * @param pool the pool's budgets
     * @param name this budget's name for messages, for example {@code cache[tenant-a]}
     * @throws IllegalArgumentException naming the field, the value and the pool's bound, for the
     *                                  first kind that exceeds its pool
     */
    public void checkWithin(Budgets pool, String name) {
        for (BudgetKind k : BudgetKind.values()) {
            if (bytes(k) > pool.bytes(k)) {
                throw new IllegalArgumentException(name + "." + field(k) + ": " + bytes(k) + " (expected <= pool."
                        + field(k) + " " + pool.bytes(k) + ")");
            }
        }
    }

    /**
     * Returns the record component's name of one budget kind.
     *
     * @param kind a budget kind
     * @return the record component's name, for example {@code deviceBytes}
     */
    public static String field(BudgetKind kind) {
        return kind.name().toLowerCase(java.util.Locale.ROOT) + "Bytes";
    }

    private static void check(String field, long value) {
        if (value <= 0 || value > MAX_BYTES) {
            throw new IllegalArgumentException(field + ": " + value + " (expected 0 < " + field + " <= " + MAX_BYTES + ")");
        }
    }
}
