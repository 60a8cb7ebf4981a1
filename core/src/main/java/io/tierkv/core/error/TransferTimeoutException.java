package io.tierkv.core.error;

/**
 * A tier move (or a wait for one) did not complete within its timeout; the source is unchanged.
 */
public final class TransferTimeoutException extends TierKvException {

    private static final long serialVersionUID = 1L;

    private final long timeoutNanos;

    /**
     * Creates the exception.
     *
     * @param what         the transfer, for example {@code promote block 12 HOST->DEVICE}
     * @param timeoutNanos the timeout that expired, in nanoseconds
     */
    public TransferTimeoutException(String what, long timeoutNanos) {
        super(what + " timed out after " + timeoutNanos / 1_000_000 + " ms", null);
        this.timeoutNanos = timeoutNanos;
    }

    /** {@return the timeout in nanoseconds} */
    public long timeoutNanos() {
        return timeoutNanos;
    }
}
