package io.tierkv.natives.cuda;

import io.tierkv.natives.ErrorCode;

/**
 * Error codes of the CUDA runtime ({@code cudaError_t}), with their numbers (C names by {@link
 * ErrorCode#cName()}; source: {@code driver_types.h}, CUDA 12 and 13). Codes not listed here map to
 * {@link #UNKNOWN} through {@link #of(int)}; the exception then still carries the number and the
 * name the library itself reports.
 *
 * <p>Immutable and thread-safe.
 */
public enum CudaError implements ErrorCode {
    /** {@code cudaSuccess} (0): no error. */
    SUCCESS(0),
    /** {@code cudaErrorInvalidValue} (1): an argument is out of range. */
    INVALID_VALUE(1),
    /** {@code cudaErrorMemoryAllocation} (2): the allocation does not fit. */
    MEMORY_ALLOCATION(2),
    /** {@code cudaErrorInitializationError} (3): the runtime could not be initialised. */
    INITIALIZATION_ERROR(3),
    /** {@code cudaErrorCudartUnloading} (4): the runtime is shutting down. */
    CUDART_UNLOADING(4),
    /** {@code cudaErrorInvalidConfiguration} (9): invalid launch configuration. */
    INVALID_CONFIGURATION(9),
    /** {@code cudaErrorInvalidDevicePointer} (17): a pointer is not a device pointer. */
    INVALID_DEVICE_POINTER(17),
    /** {@code cudaErrorInvalidMemcpyDirection} (21): the copy kind does not match the pointers. */
    INVALID_MEMCPY_DIRECTION(21),
    /** {@code cudaErrorStubLibrary} (34): a stub driver library was loaded instead of the real one. */
    STUB_LIBRARY(34),
    /** {@code cudaErrorInsufficientDriver} (35): the driver is older than the runtime (the device count is not written). */
    INSUFFICIENT_DRIVER(35),
    /** {@code cudaErrorDevicesUnavailable} (46): all devices are busy or unavailable. */
    DEVICES_UNAVAILABLE(46),
    /** {@code cudaErrorNoDevice} (100): no CUDA-capable device is visible. */
    NO_DEVICE(100),
    /** {@code cudaErrorInvalidDevice} (101): the device ordinal is out of range. */
    INVALID_DEVICE(101),
    /** {@code cudaErrorInvalidResourceHandle} (400): a stream or event handle is invalid. */
    INVALID_RESOURCE_HANDLE(400),
    /** {@code cudaErrorNotReady} (600): queued work has not completed yet (not an error for queries). */
    NOT_READY(600),
    /** {@code cudaErrorIllegalAddress} (700): the device accessed an invalid address. */
    ILLEGAL_ADDRESS(700),
    /** {@code cudaErrorHostMemoryAlreadyRegistered} (712): the host range is already registered. */
    HOST_MEMORY_ALREADY_REGISTERED(712),
    /** {@code cudaErrorHostMemoryNotRegistered} (713): the host range is not registered. */
    HOST_MEMORY_NOT_REGISTERED(713),
    /** {@code cudaErrorLaunchFailure} (719): a kernel failed. */
    LAUNCH_FAILURE(719),
    /** {@code cudaErrorNotSupported} (801): the operation is not supported here. */
    NOT_SUPPORTED(801),
    /** {@code cudaErrorSystemDriverMismatch} (803): driver and kernel module versions differ. */
    SYSTEM_DRIVER_MISMATCH(803),
    /** {@code cudaErrorUnknown} (999): unknown error. */
    UNKNOWN(999);

    private static final CudaError[] VALUES = values();

    private final int code;

    CudaError(int code) {
        this.code = code;
    }

    @Override
    public int code() {
        return code;
    }

    @Override
    public String cPrefix() {
        return "cuda";
    }

    /**
     * Looks a numeric code up.
     *
     * @param code a code returned by the API
     * @return the constant with that number, else {@link #UNKNOWN}
     */
    public static CudaError of(int code) {
        return ErrorCode.lookup(VALUES, code, UNKNOWN);
    }
}
