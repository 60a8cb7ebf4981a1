package io.tierkv.core.error;

import io.tierkv.core.budget.MachineMemory;

/**
 * A size that would be committed up front does not fit what the machine has now: host memory
 * ({@code MemAvailable}, or a container's limit, minus a margin), a GPU's free memory, the JVM's
 * heap, or disk space. Thrown by a build before anything is allocated, so nothing is left behind;
 * the caller lowers the option named, or frees the resource, and builds again.
 *
 * <p>Unlike {@link BudgetExceededException}, which an allocation raises against a budget the
 * caller set, this says that a budget the caller set is larger than the machine can give.
 */
public final class MachineLimitException extends TierKvException {

    private static final long serialVersionUID = 1L;

    private final String option;
    private final long valueBytes;
    private final String resource;
    private final long requiredBytes;
    private final long availableBytes;
    private final String reason;

    /**
     * Creates the exception. Its message reads {@code <option>: <value> B (<value>) does not fit
     * <resource>: <reason>}, the values in bytes and with a binary unit.
     *
     * @param option         the option to change, as the builder names it, for example
     *                       {@code host.budgetBytes}
     * @param valueBytes     that option's value in bytes
     * @param resource       what it does not fit, for example {@code host memory}
     * @param requiredBytes  bytes of that resource the build would commit, everything included
     * @param availableBytes bytes of it the machine can give now, after the margin
     * @param reason         how both figures are made up (terms, source, margin), for the message
     */
    public MachineLimitException(String option, long valueBytes, String resource, long requiredBytes,
            long availableBytes, String reason) {
        super(option + ": " + valueBytes + " B (" + MachineMemory.format(valueBytes) + ") does not fit " + resource
                + ": " + reason, null);
        this.option = option;
        this.valueBytes = valueBytes;
        this.resource = resource;
        this.requiredBytes = requiredBytes;
        this.availableBytes = availableBytes;
        this.reason = reason;
    }

    /** {@return the option to change, as the builder names it, for example {@code device.budgetBytes}} */
    public String option() {
        return option;
    }

    /** {@return the option's value in bytes} */
    public long valueBytes() {
        return valueBytes;
    }

    /** {@return what the option does not fit: {@code host memory}, {@code device memory}, ...} */
    public String resource() {
        return resource;
    }

    /** {@return bytes of the resource the build would commit} */
    public long requiredBytes() {
        return requiredBytes;
    }

    /** {@return bytes of the resource the machine can give now, after the margin} */
    public long availableBytes() {
        return availableBytes;
    }

    /** {@return how the figures are made up: the message after the resource} */
    public String reason() {
        return reason;
    }
}
