package io.tierkv.natives.runtime;

import io.tierkv.natives.ErrorCode;
import io.tierkv.natives.hip.HipError;
import io.tierkv.natives.hip.hip_h;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Adapts the raw {@link hip_h} bindings to the API-neutral {@link RuntimeApi} that
 * {@code NativeGpuRuntime} drives; one call per method, nothing else.
 *
 * <p>Thread-safety: as thread-safe as the HIP runtime itself.
 */
public final class HipApi implements RuntimeApi {

    private final hip_h h;

    /**
     * Wraps loaded bindings.
     *
     * @param bindings the bindings of one loaded library
     */
    public HipApi(hip_h bindings) {
        this.h = Objects.requireNonNull(bindings, "bindings");
    }

    @Override
    public String apiName() {
        return "HIP";
    }

    @Override
    public String libraryName() {
        return h.libraryName();
    }

    @Override
    public ErrorCode errorCode(int code) {
        return HipError.of(code);
    }

    @Override
    public int getDeviceCount(MemorySegment count) {
        return h.hipGetDeviceCount(count);
    }

    @Override
    public int setDevice(int deviceId) {
        return h.hipSetDevice(deviceId);
    }

    @Override
    public int getDevice(MemorySegment deviceId) {
        return h.hipGetDevice(deviceId);
    }

    @Override
    public int malloc(MemorySegment ptr, long size) {
        return h.hipMalloc(ptr, size);
    }

    @Override
    public int free(MemorySegment ptr) {
        return h.hipFree(ptr);
    }

    @Override
    public int hostMalloc(MemorySegment ptr, long size, int flags) {
        return h.hipHostMalloc(ptr, size, flags);
    }

    @Override
    public int hostFree(MemorySegment ptr) {
        return h.hipHostFree(ptr);
    }

    @Override
    public int hostRegister(MemorySegment hostPtr, long sizeBytes, int flags) {
        return h.hipHostRegister(hostPtr, sizeBytes, flags);
    }

    @Override
    public int hostUnregister(MemorySegment hostPtr) {
        return h.hipHostUnregister(hostPtr);
    }

    @Override
    public int memcpy(MemorySegment dst, MemorySegment src, long sizeBytes, int kind) {
        return h.hipMemcpy(dst, src, sizeBytes, kind);
    }

    @Override
    public int memcpyAsync(MemorySegment dst, MemorySegment src, long sizeBytes, int kind, MemorySegment stream) {
        return h.hipMemcpyAsync(dst, src, sizeBytes, kind, stream);
    }

    @Override
    public int memGetInfo(MemorySegment free, MemorySegment total) {
        return h.hipMemGetInfo(free, total);
    }

    @Override
    public int streamCreateWithFlags(MemorySegment stream, int flags) {
        return h.hipStreamCreateWithFlags(stream, flags);
    }

    @Override
    public int streamSynchronize(MemorySegment stream) {
        return h.hipStreamSynchronize(stream);
    }

    @Override
    public int streamDestroy(MemorySegment stream) {
        return h.hipStreamDestroy(stream);
    }

    @Override
    public int eventCreate(MemorySegment event) {
        return h.hipEventCreate(event);
    }

    @Override
    public int eventRecord(MemorySegment event, MemorySegment stream) {
        return h.hipEventRecord(event, stream);
    }

    @Override
    public int eventSynchronize(MemorySegment event) {
        return h.hipEventSynchronize(event);
    }

    @Override
    public int eventQuery(MemorySegment event) {
        return h.hipEventQuery(event);
    }

    @Override
    public int eventElapsedTime(MemorySegment ms, MemorySegment start, MemorySegment stop) {
        return h.hipEventElapsedTime(ms, start, stop);
    }

    @Override
    public int eventDestroy(MemorySegment event) {
        return h.hipEventDestroy(event);
    }

    @Override
    public int deviceSynchronize() {
        return h.hipDeviceSynchronize();
    }

    @Override
    public MemorySegment getErrorName(int error) {
        return h.hipGetErrorName(error);
    }

    @Override
    public MemorySegment getErrorString(int error) {
        return h.hipGetErrorString(error);
    }

    @Override
    public int runtimeGetVersion(MemorySegment runtimeVersion) {
        return h.hipRuntimeGetVersion(runtimeVersion);
    }
}
