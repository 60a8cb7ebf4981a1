package io.tierkv.natives.runtime;

import io.tierkv.natives.ErrorCode;
import java.lang.foreign.MemorySegment;

/**
 * The runtime calls {@link NativeGpuRuntime} needs, under API-neutral names, so one wrapper drives
 * HIP ({@code hip*}) and the CUDA runtime ({@code cuda*}), whose signatures match one for one.
 * Implementations forward each call to one raw binding and do no checking; see the raw classes
 * {@code hip_h} and {@code cuda_h} for the C signatures.
 *
 * <p>Return values are the API's error code (0 on success) except for {@link #getErrorName(int)}
 * and {@link #getErrorString(int)}. Thread-safety: as the underlying runtime (thread-safe; the
 * current device is per host thread).
 */
public interface RuntimeApi {

    /**
     * The API's name in messages and {@code GpuException.api()}.
     *
     * @return {@code "HIP"} or {@code "CUDA"}
     */
    String apiName();

    /**
     * The library these calls go to.
     *
     * @return the name or path it was loaded from
     */
    String libraryName();

    /**
     * Maps a numeric error code to this API's error enum.
     *
     * @param code an error code returned by one of the calls
     * @return the matching constant, or the API's unknown-code constant
     */
    ErrorCode errorCode(int code);

    /**
     * The C name of a call, for messages: {@code "malloc"} becomes {@code "hipMalloc"} or
     * {@code "cudaMalloc"}.
     *
     * @param neutralName the method name in this interface
     * @return the C function name
     */
    default String functionName(String neutralName) {
        return apiName().toLowerCase(java.util.Locale.ROOT)
                + Character.toUpperCase(neutralName.charAt(0)) + neutralName.substring(1);
    }

    /**
     * {@code hipGetDeviceCount} / {@code cudaGetDeviceCount}: Writes the number of visible devices to {@code *count}. CUDA's insufficient-driver error (35) leaves {@code *count} unwritten.
     *
     * @param count as in the C call
     * @return 0 or an error code
     */
    int getDeviceCount(MemorySegment count);

    /**
     * {@code hipSetDevice} / {@code cudaSetDevice}: Makes {@code deviceId} the calling host thread's current device.
     *
     * @param deviceId as in the C call
     * @return 0 or an error code
     */
    int setDevice(int deviceId);

    /**
     * {@code hipGetDevice} / {@code cudaGetDevice}: Writes the calling host thread's current device to {@code *deviceId}.
     *
     * @param deviceId as in the C call
     * @return 0 or an error code
     */
    int getDevice(MemorySegment deviceId);

    /**
     * {@code hipMalloc} / {@code cudaMalloc}: Allocates {@code size} bytes of device memory and writes its address to {@code *ptr}.
     *
     * @param ptr as in the C call
     * @param size as in the C call
     * @return 0 or an error code
     */
    int malloc(MemorySegment ptr, long size);

    /**
     * {@code hipFree} / {@code cudaFree}: Frees device memory from {@code malloc}; synchronises the device first.
     *
     * @param ptr as in the C call
     * @return 0 or an error code
     */
    int free(MemorySegment ptr);

    /**
     * {@code hipHostMalloc} / {@code cudaHostAlloc}: Allocates {@code size} bytes of page-locked host memory and writes its address to {@code *ptr}.
     *
     * @param ptr as in the C call
     * @param size as in the C call
     * @param flags as in the C call
     * @return 0 or an error code
     */
    int hostMalloc(MemorySegment ptr, long size, int flags);

    /**
     * {@code hipHostFree} / {@code cudaFreeHost}: Frees page-locked host memory from the host allocation call.
     *
     * @param ptr as in the C call
     * @return 0 or an error code
     */
    int hostFree(MemorySegment ptr);

    /**
     * {@code hipHostRegister} / {@code cudaHostRegister}: Page-locks an existing host range and maps it for the device.
     *
     * @param hostPtr as in the C call
     * @param sizeBytes as in the C call
     * @param flags as in the C call
     * @return 0 or an error code
     */
    int hostRegister(MemorySegment hostPtr, long sizeBytes, int flags);

    /**
     * {@code hipHostUnregister} / {@code cudaHostUnregister}: Undoes the host registration of a range.
     *
     * @param hostPtr as in the C call
     * @return 0 or an error code
     */
    int hostUnregister(MemorySegment hostPtr);

    /**
     * {@code hipMemcpy} / {@code cudaMemcpy}: Copies {@code sizeBytes} from {@code src} to {@code dst}, blocking the host.
     *
     * @param dst as in the C call
     * @param src as in the C call
     * @param sizeBytes as in the C call
     * @param kind as in the C call
     * @return 0 or an error code
     */
    int memcpy(MemorySegment dst, MemorySegment src, long sizeBytes, int kind);

    /**
     * {@code hipMemcpyAsync} / {@code cudaMemcpyAsync}: Queues a copy of {@code sizeBytes} from {@code src} to {@code dst} on {@code stream}.
     *
     * @param dst as in the C call
     * @param src as in the C call
     * @param sizeBytes as in the C call
     * @param kind as in the C call
     * @param stream as in the C call
     * @return 0 or an error code
     */
    int memcpyAsync(MemorySegment dst, MemorySegment src, long sizeBytes, int kind, MemorySegment stream);

    /**
     * {@code hipMemGetInfo} / {@code cudaMemGetInfo}: Writes the current device's free and total memory in bytes.
     *
     * @param free as in the C call
     * @param total as in the C call
     * @return 0 or an error code
     */
    int memGetInfo(MemorySegment free, MemorySegment total);

    /**
     * {@code hipStreamCreateWithFlags} / {@code cudaStreamCreateWithFlags}: Creates a stream and writes its handle to {@code *stream}.
     *
     * @param stream as in the C call
     * @param flags as in the C call
     * @return 0 or an error code
     */
    int streamCreateWithFlags(MemorySegment stream, int flags);

    /**
     * {@code hipStreamSynchronize} / {@code cudaStreamSynchronize}: Blocks until all work queued on {@code stream} has completed.
     *
     * @param stream as in the C call
     * @return 0 or an error code
     */
    int streamSynchronize(MemorySegment stream);

    /**
     * {@code hipStreamDestroy} / {@code cudaStreamDestroy}: Destroys a stream.
     *
     * @param stream as in the C call
     * @return 0 or an error code
     */
    int streamDestroy(MemorySegment stream);

    /**
     * {@code hipEventCreate} / {@code cudaEventCreate}: Creates an event (with timing) and writes its handle to {@code *event}.
     *
     * @param event as in the C call
     * @return 0 or an error code
     */
    int eventCreate(MemorySegment event);

    /**
     * {@code hipEventRecord} / {@code cudaEventRecord}: Records {@code event} on {@code stream}: it completes when all work queued before it has.
     *
     * @param event as in the C call
     * @param stream as in the C call
     * @return 0 or an error code
     */
    int eventRecord(MemorySegment event, MemorySegment stream);

    /**
     * {@code hipEventSynchronize} / {@code cudaEventSynchronize}: Blocks until {@code event} has completed.
     *
     * @param event as in the C call
     * @return 0 or an error code
     */
    int eventSynchronize(MemorySegment event);

    /**
     * {@code hipEventQuery} / {@code cudaEventQuery}: Returns success if {@code event} has completed, the not-ready error (600) if not.
     *
     * @param event as in the C call
     * @return 0 or an error code
     */
    int eventQuery(MemorySegment event);

    /**
     * {@code hipEventElapsedTime} / {@code cudaEventElapsedTime}: Writes the milliseconds between two completed events to {@code *ms}.
     *
     * @param ms as in the C call
     * @param start as in the C call
     * @param stop as in the C call
     * @return 0 or an error code
     */
    int eventElapsedTime(MemorySegment ms, MemorySegment start, MemorySegment stop);

    /**
     * {@code hipEventDestroy} / {@code cudaEventDestroy}: Destroys an event.
     *
     * @param event as in the C call
     * @return 0 or an error code
     */
    int eventDestroy(MemorySegment event);

    /**
     * {@code hipDeviceSynchronize} / {@code cudaDeviceSynchronize}: Blocks until all work on the current device has completed.
     *
     * @return 0 or an error code
     */
    int deviceSynchronize();

    /**
     * {@code hipGetErrorName} / {@code cudaGetErrorName}: Returns the symbolic name of an error code, a static NUL-terminated string.
     *
     * @param error as in the C call
     * @return a static NUL-terminated string
     */
    MemorySegment getErrorName(int error);

    /**
     * {@code hipGetErrorString} / {@code cudaGetErrorString}: Returns a description of an error code, a static NUL-terminated string.
     *
     * @param error as in the C call
     * @return a static NUL-terminated string
     */
    MemorySegment getErrorString(int error);

    /**
     * {@code hipRuntimeGetVersion} / {@code cudaRuntimeGetVersion}: Writes the runtime version number to {@code *runtimeVersion}.
     *
     * @param runtimeVersion as in the C call
     * @return 0 or an error code
     */
    int runtimeGetVersion(MemorySegment runtimeVersion);
}
