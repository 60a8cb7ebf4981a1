package io.tierkv.natives.hip;

import io.tierkv.natives.ErrorCode;

/**
 * Error codes of the HIP runtime ({@code hipError_t}), with their numbers (C names by {@link
 * ErrorCode#cName()}; source: {@code hip/hip_runtime_api.h}, HIP 5.2 to 6.x). Codes not listed here
 * map to {@link #UNKNOWN} through {@link #of(int)}; the exception then still carries the number and
 * the name the library itself reports.
 *
 * <p>Immutable and thread-safe.
 */
public enum HipError implements ErrorCode {
    /** {@code hipSuccess} (0): no error. */
    SUCCESS(0),
    /** {@code hipErrorInvalidValue} (1): an argument is out of range. */
    INVALID_VALUE(1),
    /** {@code hipErrorOutOfMemory} (2): the allocation does not fit (also hipErrorMemoryAllocation). */
    OUT_OF_MEMORY(2),
    /** {@code hipErrorNotInitialized} (3): the runtime is not initialised. */
    NOT_INITIALIZED(3),
    /** {@code hipErrorDeinitialized} (4): the runtime is shutting down. */
    DEINITIALIZED(4),
    /** {@code hipErrorInvalidConfiguration} (9): invalid launch configuration. */
    INVALID_CONFIGURATION(9),
    /** {@code hipErrorInvalidDevicePointer} (17): a pointer is not a device pointer. */
    INVALID_DEVICE_POINTER(17),
    /** {@code hipErrorInvalidMemcpyDirection} (21): the copy kind does not match the pointers. */
    INVALID_MEMCPY_DIRECTION(21),
    /** {@code hipErrorInsufficientDriver} (35): the driver is older than the runtime. */
    INSUFFICIENT_DRIVER(35),
    /** {@code hipErrorNoDevice} (100): no HIP-capable device is visible. */
    NO_DEVICE(100),
    /** {@code hipErrorInvalidDevice} (101): the device ordinal is out of range, or no device is usable. */
    INVALID_DEVICE(101),
    /** {@code hipErrorInvalidContext} (201): no valid context. */
    INVALID_CONTEXT(201),
    /** {@code hipErrorInvalidHandle} (400): a stream or event handle is invalid. */
    INVALID_HANDLE(400),
    /** {@code hipErrorNotFound} (500): a named symbol was not found. */
    NOT_FOUND(500),
    /** {@code hipErrorNotReady} (600): queued work has not completed yet (not an error for queries). */
    NOT_READY(600),
    /** {@code hipErrorIllegalAddress} (700): the device accessed an invalid address. */
    ILLEGAL_ADDRESS(700),
    /** {@code hipErrorHostMemoryAlreadyRegistered} (712): the host range is already registered. */
    HOST_MEMORY_ALREADY_REGISTERED(712),
    /** {@code hipErrorHostMemoryNotRegistered} (713): the host range is not registered. */
    HOST_MEMORY_NOT_REGISTERED(713),
    /** {@code hipErrorLaunchFailure} (719): a kernel failed. */
    LAUNCH_FAILURE(719),
    /** {@code hipErrorNotSupported} (801): the operation is not supported here. */
    NOT_SUPPORTED(801),
    /** {@code hipErrorUnknown} (999): unknown error. */
    UNKNOWN(999),
    /** {@code hipErrorRuntimeMemory} (1052): the runtime failed to allocate host memory. */
    RUNTIME_MEMORY(1052),
    /** {@code hipErrorRuntimeOther} (1053): the runtime failed internally. */
    RUNTIME_OTHER(1053);

    private static final HipError[] VALUES = values();

    private final int code;

    HipError(int code) {
        this.code = code;
    }

    @Override
    public int code() {
        return code;
    }

    @Override
    public String cPrefix() {
        return "hip";
    }

    /**
     * Looks a numeric code up.
     *
     * @param code a code returned by the API
     * @return the constant with that number, else {@link #UNKNOWN}
     */
    public static HipError of(int code) {
        return ErrorCode.lookup(VALUES, code, UNKNOWN);
    }
}
