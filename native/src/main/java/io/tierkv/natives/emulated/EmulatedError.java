package io.tierkv.natives.emulated;

import io.tierkv.natives.ErrorCode;

/**
 * Error codes of the emulated device, with their numbers (C names by {@link ErrorCode#cName()}),
 * numbered like their HIP and CUDA counterparts. Codes not listed here map to {@link #UNKNOWN}
 * through {@link #of(int)}; the exception then still carries the number and the name the library
 * itself reports.
 *
 * <p>Immutable and thread-safe.
 */
public enum EmulatedError implements ErrorCode {
    /** {@code emulatedSuccess} (0): no error. */
    SUCCESS(0),
    /** {@code emulatedErrorInvalidValue} (1): an argument is out of range. */
    INVALID_VALUE(1),
    /** {@code emulatedErrorOutOfMemory} (2): the allocation does not fit in the device capacity. */
    OUT_OF_MEMORY(2),
    /** {@code emulatedErrorNotReady} (600): queued work has not completed yet. */
    NOT_READY(600),
    /** {@code emulatedErrorIllegalAddress} (700): a queued copy touched memory that was freed or closed. */
    ILLEGAL_ADDRESS(700),
    /** {@code emulatedErrorUnknown} (999): a queued copy failed for another reason. */
    UNKNOWN(999);

    private static final EmulatedError[] VALUES = values();

    private final int code;

    EmulatedError(int code) {
        this.code = code;
    }

    @Override
    public int code() {
        return code;
    }

    @Override
    public String cPrefix() {
        return "emulated";
    }

    /**
     * Looks a numeric code up.
     *
     * @param code a code returned by the API
     * @return the constant with that number, else {@link #UNKNOWN}
     */
    public static EmulatedError of(int code) {
        return ErrorCode.lookup(VALUES, code, UNKNOWN);
    }
}
