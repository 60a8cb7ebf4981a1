package io.tierkv.core.error;

/**
 * Root of the failures a caller can handle: capacity, budgets, machine limits, disk space and
 * corrupt data.
 *
 * <p>A caller's own bug (a released block released again, use after close, a bad argument) is an
 * {@link IllegalStateException} or {@link IllegalArgumentException} instead, never one of these.
 * Every subclass carries the numbers that explain it.
 */
public abstract sealed class TierKvException extends RuntimeException
        permits CapacityExhaustedException, BudgetExceededException, MachineLimitException, DiskFullException,
                CorruptBlockException, TransferTimeoutException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what failed, with its numbers
     * @param cause   the underlying failure, or {@code null}
     */
    protected TierKvException(String message, Throwable cause) {
        super(message, cause);
    }
}
