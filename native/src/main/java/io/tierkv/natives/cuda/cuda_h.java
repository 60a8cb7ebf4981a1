package io.tierkv.natives.cuda;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Objects;

/**
 * Raw bindings to the CUDA runtime ({@code libcudart}), from {@code <cuda_runtime_api.h>}, in the layout
 * jextract generates: one lazily initialised holder class per function with its
 * {@link FunctionDescriptor} and downcall {@link MethodHandle}, behind a method named after the C
 * function. The functions and their signatures are listed in {@code native/jextract/includes.txt};
 * {@code native/jextract/regenerate.sh} regenerates the plain jextract output for comparison.
 *
 * <p>One deliberate difference from jextract output: jextract binds a class to one library for the
 * whole JVM (a static symbol lookup), while this class is instantiated per loaded library, so the
 * real library and a test library can be used in one JVM. The holders therefore keep
 * address-free downcall handles, and each instance keeps the symbol addresses it resolved, all at
 * construction, so a library that lacks a symbol is refused at once with the symbol's name.
 *
 * <p>Types: {@code cudaError_t}, {@code cudaMemcpyKind} and {@code unsigned int} map to Java
 * {@code int}; {@code size_t} to {@code long} (LP64); {@code cudaStream_t},
 * {@code cudaEvent_t} and pointers to {@link MemorySegment}. Every function returns a
 * {@code cudaError_t} (0 on success) except the two error-text functions.
 *
 * <p>Thread-safety: instances are immutable and the runtime is thread-safe, but the current device
 * ({@code cudaSetDevice}) is per host thread. The methods do no checking: a wrong pointer or length
 * crashes the JVM. Use the {@code GpuRuntime} wrapper for checked calls.
 */
@SuppressWarnings("restricted")
public final class cuda_h {

    private static final Linker LINKER = Linker.nativeLinker();

    /** C {@code int} and the enums {@code cudaError_t}, {@code cudaMemcpyKind}: 32 bits. */
    public static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
    /** C {@code float}: 32-bit IEEE 754. */
    public static final ValueLayout.OfFloat C_FLOAT = ValueLayout.JAVA_FLOAT;
    /** C {@code size_t} on LP64: 64 bits. */
    public static final ValueLayout.OfLong C_SIZE_T = ValueLayout.JAVA_LONG;
    /** C pointer; returned strings can be read with {@link MemorySegment#getString(long)}. */
    public static final AddressLayout C_POINTER = ValueLayout.ADDRESS
            .withTargetLayout(MemoryLayout.sequenceLayout(Long.MAX_VALUE, ValueLayout.JAVA_BYTE));

    /** {@code cudaSuccess}: no error. */
    public static final int cudaSuccess = 0;
    /** {@code cudaMemcpyHostToHost}. */
    public static final int cudaMemcpyHostToHost = 0;
    /** {@code cudaMemcpyHostToDevice}. */
    public static final int cudaMemcpyHostToDevice = 1;
    /** {@code cudaMemcpyDeviceToHost}. */
    public static final int cudaMemcpyDeviceToHost = 2;
    /** {@code cudaMemcpyDeviceToDevice}. */
    public static final int cudaMemcpyDeviceToDevice = 3;
    /** {@code cudaMemcpyDefault}: direction inferred from unified addressing. */
    public static final int cudaMemcpyDefault = 4;
    /** {@code cudaStreamNonBlocking}: the stream does not synchronise with the null stream. */
    public static final int cudaStreamNonBlocking = 1;
    /** {@code cudaHostAllocDefault}: default flags for page-locked allocation. */
    public static final int cudaHostAllocDefault = 0;
    /** {@code cudaHostRegisterDefault}: default flags for host registration. */
    public static final int cudaHostRegisterDefault = 0;

    private final String libraryName;
    private final MemorySegment cudaGetDeviceCount$ADDR;
    private final MemorySegment cudaSetDevice$ADDR;
    private final MemorySegment cudaGetDevice$ADDR;
    private final MemorySegment cudaMalloc$ADDR;
    private final MemorySegment cudaFree$ADDR;
    private final MemorySegment cudaHostAlloc$ADDR;
    private final MemorySegment cudaFreeHost$ADDR;
    private final MemorySegment cudaHostRegister$ADDR;
    private final MemorySegment cudaHostUnregister$ADDR;
    private final MemorySegment cudaMemcpy$ADDR;
    private final MemorySegment cudaMemcpyAsync$ADDR;
    private final MemorySegment cudaMemGetInfo$ADDR;
    private final MemorySegment cudaStreamCreateWithFlags$ADDR;
    private final MemorySegment cudaStreamSynchronize$ADDR;
    private final MemorySegment cudaStreamDestroy$ADDR;
    private final MemorySegment cudaEventCreate$ADDR;
    private final MemorySegment cudaEventRecord$ADDR;
    private final MemorySegment cudaEventSynchronize$ADDR;
    private final MemorySegment cudaEventQuery$ADDR;
    private final MemorySegment cudaEventElapsedTime$ADDR;
    private final MemorySegment cudaEventDestroy$ADDR;
    private final MemorySegment cudaDeviceSynchronize$ADDR;
    private final MemorySegment cudaGetErrorName$ADDR;
    private final MemorySegment cudaGetErrorString$ADDR;
    private final MemorySegment cudaRuntimeGetVersion$ADDR;

    /**
     * Resolves every symbol of this class in {@code lookup}.
     *
     * @param lookup the loaded library, for example from {@link SymbolLookup#libraryLookup(String,
     *     java.lang.foreign.Arena)}; it must stay loaded while this instance is used
     * @param libraryName the name or path the library was loaded from, for messages
     * @throws UnsatisfiedLinkError if a symbol is missing, naming it and the library
     */
    public cuda_h(SymbolLookup lookup, String libraryName) {
        Objects.requireNonNull(lookup, "lookup");
        this.libraryName = Objects.requireNonNull(libraryName, "libraryName");
        this.cudaGetDeviceCount$ADDR = findOrThrow(lookup, "cudaGetDeviceCount");
        this.cudaSetDevice$ADDR = findOrThrow(lookup, "cudaSetDevice");
        this.cudaGetDevice$ADDR = findOrThrow(lookup, "cudaGetDevice");
        this.cudaMalloc$ADDR = findOrThrow(lookup, "cudaMalloc");
        this.cudaFree$ADDR = findOrThrow(lookup, "cudaFree");
        this.cudaHostAlloc$ADDR = findOrThrow(lookup, "cudaHostAlloc");
        this.cudaFreeHost$ADDR = findOrThrow(lookup, "cudaFreeHost");
        this.cudaHostRegister$ADDR = findOrThrow(lookup, "cudaHostRegister");
        this.cudaHostUnregister$ADDR = findOrThrow(lookup, "cudaHostUnregister");
        this.cudaMemcpy$ADDR = findOrThrow(lookup, "cudaMemcpy");
        this.cudaMemcpyAsync$ADDR = findOrThrow(lookup, "cudaMemcpyAsync");
        this.cudaMemGetInfo$ADDR = findOrThrow(lookup, "cudaMemGetInfo");
        this.cudaStreamCreateWithFlags$ADDR = findOrThrow(lookup, "cudaStreamCreateWithFlags");
        this.cudaStreamSynchronize$ADDR = findOrThrow(lookup, "cudaStreamSynchronize");
        this.cudaStreamDestroy$ADDR = findOrThrow(lookup, "cudaStreamDestroy");
        this.cudaEventCreate$ADDR = findOrThrow(lookup, "cudaEventCreate");
        this.cudaEventRecord$ADDR = findOrThrow(lookup, "cudaEventRecord");
        this.cudaEventSynchronize$ADDR = findOrThrow(lookup, "cudaEventSynchronize");
        this.cudaEventQuery$ADDR = findOrThrow(lookup, "cudaEventQuery");
        this.cudaEventElapsedTime$ADDR = findOrThrow(lookup, "cudaEventElapsedTime");
        this.cudaEventDestroy$ADDR = findOrThrow(lookup, "cudaEventDestroy");
        this.cudaDeviceSynchronize$ADDR = findOrThrow(lookup, "cudaDeviceSynchronize");
        this.cudaGetErrorName$ADDR = findOrThrow(lookup, "cudaGetErrorName");
        this.cudaGetErrorString$ADDR = findOrThrow(lookup, "cudaGetErrorString");
        this.cudaRuntimeGetVersion$ADDR = findOrThrow(lookup, "cudaRuntimeGetVersion");
    }

    /**
     * The name or path this instance's library was loaded from.
     *
     * @return the library name given at construction
     */
    public String libraryName() {
        return libraryName;
    }

    private MemorySegment findOrThrow(SymbolLookup lookup, String symbol) {
        return lookup.find(symbol).orElseThrow(() -> new UnsatisfiedLinkError(
                "unresolved symbol " + symbol + " in " + libraryName));
    }

    private static class cudaGetDeviceCount {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaGetDeviceCount(int *count)}: Writes the number of visible devices to {@code *count}. CUDA's insufficient-driver error (35) leaves {@code *count} unwritten.
     *
     * @param count int *
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaGetDeviceCount(MemorySegment count) {
        try {
            return (int) cudaGetDeviceCount.HANDLE.invokeExact(cudaGetDeviceCount$ADDR, count);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaSetDevice {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaSetDevice(int deviceId)}: Makes {@code deviceId} the calling host thread's current device.
     *
     * @param deviceId int
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaSetDevice(int deviceId) {
        try {
            return (int) cudaSetDevice.HANDLE.invokeExact(cudaSetDevice$ADDR, deviceId);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaGetDevice {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaGetDevice(int *deviceId)}: Writes the calling host thread's current device to {@code *deviceId}.
     *
     * @param deviceId int *
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaGetDevice(MemorySegment deviceId) {
        try {
            return (int) cudaGetDevice.HANDLE.invokeExact(cudaGetDevice$ADDR, deviceId);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMalloc {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_SIZE_T);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaMalloc(void **ptr, size_t size)}: Allocates {@code size} bytes of device memory and writes its address to {@code *ptr}.
     *
     * @param ptr void **
     * @param size size_t
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaMalloc(MemorySegment ptr, long size) {
        try {
            return (int) cudaMalloc.HANDLE.invokeExact(cudaMalloc$ADDR, ptr, size);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaFree {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaFree(void *ptr)}: Frees device memory from {@code malloc}; synchronises the device first.
     *
     * @param ptr void *
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaFree(MemorySegment ptr) {
        try {
            return (int) cudaFree.HANDLE.invokeExact(cudaFree$ADDR, ptr);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaHostAlloc {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_SIZE_T, C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)}: Allocates {@code size} bytes of page-locked host memory and writes its address to {@code *ptr}.
     *
     * @param ptr void **
     * @param size size_t
     * @param flags unsigned int
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaHostAlloc(MemorySegment ptr, long size, int flags) {
        try {
            return (int) cudaHostAlloc.HANDLE.invokeExact(cudaHostAlloc$ADDR, ptr, size, flags);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaFreeHost {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaFreeHost(void *ptr)}: Frees page-locked host memory from the host allocation call.
     *
     * @param ptr void *
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaFreeHost(MemorySegment ptr) {
        try {
            return (int) cudaFreeHost.HANDLE.invokeExact(cudaFreeHost$ADDR, ptr);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaHostRegister {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_SIZE_T, C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaHostRegister(void *hostPtr, size_t sizeBytes, unsigned int flags)}: Page-locks an existing host range and maps it for the device.
     *
     * @param hostPtr void *
     * @param sizeBytes size_t
     * @param flags unsigned int
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaHostRegister(MemorySegment hostPtr, long sizeBytes, int flags) {
        try {
            return (int) cudaHostRegister.HANDLE.invokeExact(cudaHostRegister$ADDR, hostPtr, sizeBytes, flags);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaHostUnregister {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaHostUnregister(void *hostPtr)}: Undoes the host registration of a range.
     *
     * @param hostPtr void *
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaHostUnregister(MemorySegment hostPtr) {
        try {
            return (int) cudaHostUnregister.HANDLE.invokeExact(cudaHostUnregister$ADDR, hostPtr);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMemcpy {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_POINTER, C_SIZE_T, C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaMemcpy(void *dst, const void *src, size_t sizeBytes, cudaMemcpyKind kind)}: Copies {@code sizeBytes} from {@code src} to {@code dst}, blocking the host.
     *
     * @param dst void *
     * @param src const void *
     * @param sizeBytes size_t
     * @param kind cudaMemcpyKind
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaMemcpy(MemorySegment dst, MemorySegment src, long sizeBytes, int kind) {
        try {
            return (int) cudaMemcpy.HANDLE.invokeExact(cudaMemcpy$ADDR, dst, src, sizeBytes, kind);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMemcpyAsync {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_POINTER, C_SIZE_T, C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t sizeBytes, cudaMemcpyKind kind, cudaStream_t stream)}: Queues a copy of {@code sizeBytes} from {@code src} to {@code dst} on {@code stream}.
     *
     * @param dst void *
     * @param src const void *
     * @param sizeBytes size_t
     * @param kind cudaMemcpyKind
     * @param stream cudaStream_t
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaMemcpyAsync(MemorySegment dst, MemorySegment src, long sizeBytes, int kind, MemorySegment stream) {
        try {
            return (int) cudaMemcpyAsync.HANDLE.invokeExact(cudaMemcpyAsync$ADDR, dst, src, sizeBytes, kind, stream);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMemGetInfo {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaMemGetInfo(size_t *free, size_t *total)}: Writes the current device's free and total memory in bytes.
     *
     * @param free size_t *
     * @param total size_t *
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaMemGetInfo(MemorySegment free, MemorySegment total) {
        try {
            return (int) cudaMemGetInfo.HANDLE.invokeExact(cudaMemGetInfo$ADDR, free, total);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaStreamCreateWithFlags {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)}: Creates a stream and writes its handle to {@code *stream}.
     *
     * @param stream cudaStream_t *
     * @param flags unsigned int
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaStreamCreateWithFlags(MemorySegment stream, int flags) {
        try {
            return (int) cudaStreamCreateWithFlags.HANDLE.invokeExact(cudaStreamCreateWithFlags$ADDR, stream, flags);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaStreamSynchronize {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaStreamSynchronize(cudaStream_t stream)}: Blocks until all work queued on {@code stream} has completed.
     *
     * @param stream cudaStream_t
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaStreamSynchronize(MemorySegment stream) {
        try {
            return (int) cudaStreamSynchronize.HANDLE.invokeExact(cudaStreamSynchronize$ADDR, stream);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaStreamDestroy {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaStreamDestroy(cudaStream_t stream)}: Destroys a stream.
     *
     * @param stream cudaStream_t
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaStreamDestroy(MemorySegment stream) {
        try {
            return (int) cudaStreamDestroy.HANDLE.invokeExact(cudaStreamDestroy$ADDR, stream);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventCreate {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaEventCreate(cudaEvent_t *event)}: Creates an event (with timing) and writes its handle to {@code *event}.
     *
     * @param event cudaEvent_t *
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaEventCreate(MemorySegment event) {
        try {
            return (int) cudaEventCreate.HANDLE.invokeExact(cudaEventCreate$ADDR, event);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventRecord {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)}: Records {@code event} on {@code stream}: it completes when all work queued before it has.
     *
     * @param event cudaEvent_t
     * @param stream cudaStream_t
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaEventRecord(MemorySegment event, MemorySegment stream) {
        try {
            return (int) cudaEventRecord.HANDLE.invokeExact(cudaEventRecord$ADDR, event, stream);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventSynchronize {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaEventSynchronize(cudaEvent_t event)}: Blocks until {@code event} has completed.
     *
     * @param event cudaEvent_t
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaEventSynchronize(MemorySegment event) {
        try {
            return (int) cudaEventSynchronize.HANDLE.invokeExact(cudaEventSynchronize$ADDR, event);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventQuery {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaEventQuery(cudaEvent_t event)}: Returns success if {@code event} has completed, the not-ready error (600) if not.
     *
     * @param event cudaEvent_t
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaEventQuery(MemorySegment event) {
        try {
            return (int) cudaEventQuery.HANDLE.invokeExact(cudaEventQuery$ADDR, event);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventElapsedTime {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_POINTER, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t stop)}: Writes the milliseconds between two completed events to {@code *ms}.
     *
     * @param ms float *
     * @param start cudaEvent_t
     * @param stop cudaEvent_t
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaEventElapsedTime(MemorySegment ms, MemorySegment start, MemorySegment stop) {
        try {
            return (int) cudaEventElapsedTime.HANDLE.invokeExact(cudaEventElapsedTime$ADDR, ms, start, stop);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventDestroy {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaEventDestroy(cudaEvent_t event)}: Destroys an event.
     *
     * @param event cudaEvent_t
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaEventDestroy(MemorySegment event) {
        try {
            return (int) cudaEventDestroy.HANDLE.invokeExact(cudaEventDestroy$ADDR, event);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaDeviceSynchronize {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaDeviceSynchronize(void)}: Blocks until all work on the current device has completed.
     *
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaDeviceSynchronize() {
        try {
            return (int) cudaDeviceSynchronize.HANDLE.invokeExact(cudaDeviceSynchronize$ADDR);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaGetErrorName {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_POINTER, C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code const char * cudaGetErrorName(cudaError_t error)}: Returns the symbolic name of an error code, a static NUL-terminated string.
     *
     * @param error cudaError_t
     * @return a static NUL-terminated string (never freed)
     */
    public MemorySegment cudaGetErrorName(int error) {
        try {
            return (MemorySegment) cudaGetErrorName.HANDLE.invokeExact(cudaGetErrorName$ADDR, error);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaGetErrorString {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_POINTER, C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code const char * cudaGetErrorString(cudaError_t error)}: Returns a description of an error code, a static NUL-terminated string.
     *
     * @param error cudaError_t
     * @return a static NUL-terminated string (never freed)
     */
    public MemorySegment cudaGetErrorString(int error) {
        try {
            return (MemorySegment) cudaGetErrorString.HANDLE.invokeExact(cudaGetErrorString$ADDR, error);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaRuntimeGetVersion {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)}: Writes the runtime version number to {@code *runtimeVersion}.
     *
     * @param runtimeVersion int *
     * @return {@code cudaSuccess} (0) or an error code
     */
    public int cudaRuntimeGetVersion(MemorySegment runtimeVersion) {
        try {
            return (int) cudaRuntimeGetVersion.HANDLE.invokeExact(cudaRuntimeGetVersion$ADDR, runtimeVersion);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }
}
