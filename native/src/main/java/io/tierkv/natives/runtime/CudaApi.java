package io.tierkv.natives.runtime;

import io.tierkv.natives.ErrorCode;
import io.tierkv.natives.cuda.CudaError;
import io.tierkv.natives.cuda.cuda_h;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Adapts the raw {@link cuda_h} bindings to the API-neutral {@link RuntimeApi} that
 * {@code NativeGpuRuntime} drives; one call per method, nothing else.
 *
 * <p>Thread-safety: as thread-safe as the CUDA runtime itself.
 */
public final class CudaApi implements RuntimeApi {

    private final cuda_h h;

    /**
     * Wraps loaded bindings.
     *
     * @param bindings the bindings of one loaded library
     */
    public CudaApi(cuda_h bindings) {
        this.h = Objects.requireNonNull(bindings, "bindings");
    }

    @Override
    public String apiName() {
        return "CUDA";
    }

    @Override
    public String libraryName() {
        return h.libraryName();
    }

    @Override
    public ErrorCode errorCode(int code) {
        return CudaError.of(code);
    }

    @Override
    public String functionName(String neutralName) {
        return switch (neutralName) {
            case "hostMalloc" -> "cudaHostAlloc";
            case "hostFree" -> "cudaFreeHost";
            default -> RuntimeApi.super.functionName(neutralName);
        };
    }

    @Override
    public int getDeviceCount(MemorySegment count) {
        return h.cudaGetDeviceCount(count);
    }

    @Override
    public int setDevice(int deviceId) {
        return h.cudaSetDevice(deviceId);
    }

    @Override
    public int getDevice(MemorySegment deviceId) {
        return h.cudaGetDevice(deviceId);
    }

    @Override
    public int malloc(MemorySegment ptr, long size) {
        return h.cudaMalloc(ptr, size);
    }

    @Override
    public int free(MemorySegment ptr) {
        return h.cudaFree(ptr);
    }

    @Override
    public int hostMalloc(MemorySegment ptr, long size, int flags) {
        return h.cudaHostAlloc(ptr, size, flags);
    }

    @Override
    public int hostFree(MemorySegment ptr) {
        return h.cudaFreeHost(ptr);
    }

    @Override
    public int hostRegister(MemorySegment hostPtr, long sizeBytes, int flags) {
        return h.cudaHostRegister(hostPtr, sizeBytes, flags);
    }

    @Override
    public int hostUnregister(MemorySegment hostPtr) {
        return h.cudaHostUnregister(hostPtr);
    }

    @Override
    public int memcpy(MemorySegment dst, MemorySegment src, long sizeBytes, int kind) {
        return h.cudaMemcpy(dst, src, sizeBytes, kind);
    }

    @Override
    public int memcpyAsync(MemorySegment dst, MemorySegment src, long sizeBytes, int kind, MemorySegment stream) {
        return h.cudaMemcpyAsync(dst, src, sizeBytes, kind, stream);
    }

    @Override
    public int memGetInfo(MemorySegment free, MemorySegment total) {
        return h.cudaMemGetInfo(free, total);
    }

    @Override
    public int streamCreateWithFlags(MemorySegment stream, int flags) {
        return h.cudaStreamCreateWithFlags(stream, flags);
    }

    @Override
    public int streamSynchronize(MemorySegment stream) {
        return h.cudaStreamSynchronize(stream);
    }

    @Override
    public int streamDestroy(MemorySegment stream) {
        return h.cudaStreamDestroy(stream);
    }

    @Override
    public int eventCreate(MemorySegment event) {
        return h.cudaEventCreate(event);
    }

    @Override
    public int eventRecord(MemorySegment event, MemorySegment stream) {
        return h.cudaEventRecord(event, stream);
    }

    @Override
    public int eventSynchronize(MemorySegment event) {
        return h.cudaEventSynchronize(event);
    }

    @Override
    public int eventQuery(MemorySegment event) {
        return h.cudaEventQuery(event);
    }

    @Override
    public int eventElapsedTime(MemorySegment ms, MemorySegment start, MemorySegment stop) {
        return h.cudaEventElapsedTime(ms, start, stop);
    }

    @Override
    public int eventDestroy(MemorySegment event) {
        return h.cudaEventDestroy(event);
    }

    @Override
    public int deviceSynchronize() {
        return h.cudaDeviceSynchronize();
    }

    @Override
    public MemorySegment getErrorName(int error) {
        return h.cudaGetErrorName(error);
    }

    @Override
    public MemorySegment getErrorString(int error) {
        return h.cudaGetErrorString(error);
    }

    @Override
    public int runtimeGetVersion(MemorySegment runtimeVersion) {
        return h.cudaRuntimeGetVersion(runtimeVersion);
    }
}
