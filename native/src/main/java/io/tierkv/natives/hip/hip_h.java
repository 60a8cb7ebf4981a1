package io.tierkv.natives.hip;

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
 * Raw bindings to the HIP runtime ({@code libamdhip64}), from {@code <hip/hip_runtime_api.h>}, in the layout
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
 * <p>Types: {@code hipError_t}, {@code hipMemcpyKind} and {@code unsigned int} map to Java
 * {@code int}; {@code size_t} to {@code long} (LP64); {@code hipStream_t},
 * {@code hipEvent_t} and pointers to {@link MemorySegment}. Every function returns a
 * {@code hipError_t} (0 on success) except the two error-text functions.
 *
 * <p>Thread-safety: instances are immutable and the runtime is thread-safe, but the current device
 * ({@code hipSetDevice}) is per host thread. The methods do no checking: a wrong pointer or length
 * crashes the JVM. Use the {@code GpuRuntime} wrapper for checked calls.
 */
@SuppressWarnings("restricted")
public final class hip_h {

    private static final Linker LINKER = Linker.nativeLinker();

    /** C {@code int} and the enums {@code hipError_t}, {@code hipMemcpyKind}: 32 bits. */
    public static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
    /** C {@code float}: 32-bit IEEE 754. */
    public static final ValueLayout.OfFloat C_FLOAT = ValueLayout.JAVA_FLOAT;
    /** C {@code size_t} on LP64: 64 bits. */
    public static final ValueLayout.OfLong C_SIZE_T = ValueLayout.JAVA_LONG;
    /** C pointer; returned strings can be read with {@link MemorySegment#getString(long)}. */
    public static final AddressLayout C_POINTER = ValueLayout.ADDRESS
            .withTargetLayout(MemoryLayout.sequenceLayout(Long.MAX_VALUE, ValueLayout.JAVA_BYTE));

    /** {@code hipSuccess}: no error. */
    public static final int hipSuccess = 0;
    /** {@code hipMemcpyHostToHost}. */
    public static final int hipMemcpyHostToHost = 0;
    /** {@code hipMemcpyHostToDevice}. */
    public static final int hipMemcpyHostToDevice = 1;
    /** {@code hipMemcpyDeviceToHost}. */
    public static final int hipMemcpyDeviceToHost = 2;
    /** {@code hipMemcpyDeviceToDevice}. */
    public static final int hipMemcpyDeviceToDevice = 3;
    /** {@code hipMemcpyDefault}: direction inferred from unified addressing. */
    public static final int hipMemcpyDefault = 4;
    /** {@code hipStreamNonBlocking}: the stream does not synchronise with the null stream. */
    public static final int hipStreamNonBlocking = 1;
    /** {@code hipHostMallocDefault}: default flags for page-locked allocation. */
    public static final int hipHostMallocDefault = 0;
    /** {@code hipHostRegisterDefault}: default flags for host registration. */
    public static final int hipHostRegisterDefault = 0;

    private final String libraryName;
    private final MemorySegment hipGetDeviceCount$ADDR;
    private final MemorySegment hipSetDevice$ADDR;
    private final MemorySegment hipGetDevice$ADDR;
    private final MemorySegment hipMalloc$ADDR;
    private final MemorySegment hipFree$ADDR;
    private final MemorySegment hipHostMalloc$ADDR;
    private final MemorySegment hipHostFree$ADDR;
    private final MemorySegment hipHostRegister$ADDR;
    private final MemorySegment hipHostUnregister$ADDR;
    private final MemorySegment hipMemcpy$ADDR;
    private final MemorySegment hipMemcpyAsync$ADDR;
    private final MemorySegment hipMemGetInfo$ADDR;
    private final MemorySegment hipStreamCreateWithFlags$ADDR;
    private final MemorySegment hipStreamSynchronize$ADDR;
    private final MemorySegment hipStreamDestroy$ADDR;
    private final MemorySegment hipEventCreate$ADDR;
    private final MemorySegment hipEventRecord$ADDR;
    private final MemorySegment hipEventSynchronize$ADDR;
    private final MemorySegment hipEventQuery$ADDR;
    private final MemorySegment hipEventElapsedTime$ADDR;
    private final MemorySegment hipEventDestroy$ADDR;
    private final MemorySegment hipDeviceSynchronize$ADDR;
    private final MemorySegment hipGetErrorName$ADDR;
    private final MemorySegment hipGetErrorString$ADDR;
    private final MemorySegment hipRuntimeGetVersion$ADDR;

    /**
     * Resolves every symbol of this class in {@code lookup}.
     *
     * @param lookup the loaded library, for example from {@link SymbolLookup#libraryLookup(String,
     *     java.lang.foreign.Arena)}; it must stay loaded while this instance is used
     * @param libraryName the name or path the library was loaded from, for messages
     * @throws UnsatisfiedLinkError if a symbol is missing, naming it and the library
     */
    public hip_h(SymbolLookup lookup, String libraryName) {
        Objects.requireNonNull(lookup, "lookup");
        this.libraryName = Objects.requireNonNull(libraryName, "libraryName");
        this.hipGetDeviceCount$ADDR = findOrThrow(lookup, "hipGetDeviceCount");
        this.hipSetDevice$ADDR = findOrThrow(lookup, "hipSetDevice");
        this.hipGetDevice$ADDR = findOrThrow(lookup, "hipGetDevice");
        this.hipMalloc$ADDR = findOrThrow(lookup, "hipMalloc");
        this.hipFree$ADDR = findOrThrow(lookup, "hipFree");
        this.hipHostMalloc$ADDR = findOrThrow(lookup, "hipHostMalloc");
        this.hipHostFree$ADDR = findOrThrow(lookup, "hipHostFree");
        this.hipHostRegister$ADDR = findOrThrow(lookup, "hipHostRegister");
        this.hipHostUnregister$ADDR = findOrThrow(lookup, "hipHostUnregister");
        this.hipMemcpy$ADDR = findOrThrow(lookup, "hipMemcpy");
        this.hipMemcpyAsync$ADDR = findOrThrow(lookup, "hipMemcpyAsync");
        this.hipMemGetInfo$ADDR = findOrThrow(lookup, "hipMemGetInfo");
        this.hipStreamCreateWithFlags$ADDR = findOrThrow(lookup, "hipStreamCreateWithFlags");
        this.hipStreamSynchronize$ADDR = findOrThrow(lookup, "hipStreamSynchronize");
        this.hipStreamDestroy$ADDR = findOrThrow(lookup, "hipStreamDestroy");
        this.hipEventCreate$ADDR = findOrThrow(lookup, "hipEventCreate");
        this.hipEventRecord$ADDR = findOrThrow(lookup, "hipEventRecord");
        this.hipEventSynchronize$ADDR = findOrThrow(lookup, "hipEventSynchronize");
        this.hipEventQuery$ADDR = findOrThrow(lookup, "hipEventQuery");
        this.hipEventElapsedTime$ADDR = findOrThrow(lookup, "hipEventElapsedTime");
        this.hipEventDestroy$ADDR = findOrThrow(lookup, "hipEventDestroy");
        this.hipDeviceSynchronize$ADDR = findOrThrow(lookup, "hipDeviceSynchronize");
        this.hipGetErrorName$ADDR = findOrThrow(lookup, "hipGetErrorName");
        this.hipGetErrorString$ADDR = findOrThrow(lookup, "hipGetErrorString");
        this.hipRuntimeGetVersion$ADDR = findOrThrow(lookup, "hipRuntimeGetVersion");
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

    private static class hipGetDeviceCount {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipGetDeviceCount(int *count)}: Writes the number of visible devices to {@code *count}. CUDA's insufficient-driver error (35) leaves {@code *count} unwritten.
     *
     * @param count int *
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipGetDeviceCount(MemorySegment count) {
        try {
            return (int) hipGetDeviceCount.HANDLE.invokeExact(hipGetDeviceCount$ADDR, count);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipSetDevice {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipSetDevice(int deviceId)}: Makes {@code deviceId} the calling host thread's current device.
     *
     * @param deviceId int
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipSetDevice(int deviceId) {
        try {
            return (int) hipSetDevice.HANDLE.invokeExact(hipSetDevice$ADDR, deviceId);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipGetDevice {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipGetDevice(int *deviceId)}: Writes the calling host thread's current device to {@code *deviceId}.
     *
     * @param deviceId int *
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipGetDevice(MemorySegment deviceId) {
        try {
            return (int) hipGetDevice.HANDLE.invokeExact(hipGetDevice$ADDR, deviceId);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipMalloc {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_SIZE_T);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipMalloc(void **ptr, size_t size)}: Allocates {@code size} bytes of device memory and writes its address to {@code *ptr}.
     *
     * @param ptr void **
     * @param size size_t
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipMalloc(MemorySegment ptr, long size) {
        try {
            return (int) hipMalloc.HANDLE.invokeExact(hipMalloc$ADDR, ptr, size);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipFree {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipFree(void *ptr)}: Frees device memory from {@code malloc}; synchronises the device first.
     *
     * @param ptr void *
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipFree(MemorySegment ptr) {
        try {
            return (int) hipFree.HANDLE.invokeExact(hipFree$ADDR, ptr);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipHostMalloc {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_SIZE_T, C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)}: Allocates {@code size} bytes of page-locked host memory and writes its address to {@code *ptr}.
     *
     * @param ptr void **
     * @param size size_t
     * @param flags unsigned int
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipHostMalloc(MemorySegment ptr, long size, int flags) {
        try {
            return (int) hipHostMalloc.HANDLE.invokeExact(hipHostMalloc$ADDR, ptr, size, flags);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipHostFree {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipHostFree(void *ptr)}: Frees page-locked host memory from the host allocation call.
     *
     * @param ptr void *
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipHostFree(MemorySegment ptr) {
        try {
            return (int) hipHostFree.HANDLE.invokeExact(hipHostFree$ADDR, ptr);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipHostRegister {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_SIZE_T, C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipHostRegister(void *hostPtr, size_t sizeBytes, unsigned int flags)}: Page-locks an existing host range and maps it for the device.
     *
     * @param hostPtr void *
     * @param sizeBytes size_t
     * @param flags unsigned int
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipHostRegister(MemorySegment hostPtr, long sizeBytes, int flags) {
        try {
            return (int) hipHostRegister.HANDLE.invokeExact(hipHostRegister$ADDR, hostPtr, sizeBytes, flags);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipHostUnregister {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipHostUnregister(void *hostPtr)}: Undoes the host registration of a range.
     *
     * @param hostPtr void *
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipHostUnregister(MemorySegment hostPtr) {
        try {
            return (int) hipHostUnregister.HANDLE.invokeExact(hipHostUnregister$ADDR, hostPtr);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipMemcpy {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_POINTER, C_SIZE_T, C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipMemcpy(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind)}: Copies {@code sizeBytes} from {@code src} to {@code dst}, blocking the host.
     *
     * @param dst void *
     * @param src const void *
     * @param sizeBytes size_t
     * @param kind hipMemcpyKind
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipMemcpy(MemorySegment dst, MemorySegment src, long sizeBytes, int kind) {
        try {
            return (int) hipMemcpy.HANDLE.invokeExact(hipMemcpy$ADDR, dst, src, sizeBytes, kind);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipMemcpyAsync {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_POINTER, C_SIZE_T, C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind, hipStream_t stream)}: Queues a copy of {@code sizeBytes} from {@code src} to {@code dst} on {@code stream}.
     *
     * @param dst void *
     * @param src const void *
     * @param sizeBytes size_t
     * @param kind hipMemcpyKind
     * @param stream hipStream_t
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipMemcpyAsync(MemorySegment dst, MemorySegment src, long sizeBytes, int kind, MemorySegment stream) {
        try {
            return (int) hipMemcpyAsync.HANDLE.invokeExact(hipMemcpyAsync$ADDR, dst, src, sizeBytes, kind, stream);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipMemGetInfo {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipMemGetInfo(size_t *free, size_t *total)}: Writes the current device's free and total memory in bytes.
     *
     * @param free size_t *
     * @param total size_t *
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipMemGetInfo(MemorySegment free, MemorySegment total) {
        try {
            return (int) hipMemGetInfo.HANDLE.invokeExact(hipMemGetInfo$ADDR, free, total);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipStreamCreateWithFlags {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)}: Creates a stream and writes its handle to {@code *stream}.
     *
     * @param stream hipStream_t *
     * @param flags unsigned int
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipStreamCreateWithFlags(MemorySegment stream, int flags) {
        try {
            return (int) hipStreamCreateWithFlags.HANDLE.invokeExact(hipStreamCreateWithFlags$ADDR, stream, flags);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipStreamSynchronize {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipStreamSynchronize(hipStream_t stream)}: Blocks until all work queued on {@code stream} has completed.
     *
     * @param stream hipStream_t
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipStreamSynchronize(MemorySegment stream) {
        try {
            return (int) hipStreamSynchronize.HANDLE.invokeExact(hipStreamSynchronize$ADDR, stream);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipStreamDestroy {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipStreamDestroy(hipStream_t stream)}: Destroys a stream.
     *
     * @param stream hipStream_t
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipStreamDestroy(MemorySegment stream) {
        try {
            return (int) hipStreamDestroy.HANDLE.invokeExact(hipStreamDestroy$ADDR, stream);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipEventCreate {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipEventCreate(hipEvent_t *event)}: Creates an event (with timing) and writes its handle to {@code *event}.
     *
     * @param event hipEvent_t *
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipEventCreate(MemorySegment event) {
        try {
            return (int) hipEventCreate.HANDLE.invokeExact(hipEventCreate$ADDR, event);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipEventRecord {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)}: Records {@code event} on {@code stream}: it completes when all work queued before it has.
     *
     * @param event hipEvent_t
     * @param stream hipStream_t
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipEventRecord(MemorySegment event, MemorySegment stream) {
        try {
            return (int) hipEventRecord.HANDLE.invokeExact(hipEventRecord$ADDR, event, stream);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipEventSynchronize {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipEventSynchronize(hipEvent_t event)}: Blocks until {@code event} has completed.
     *
     * @param event hipEvent_t
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipEventSynchronize(MemorySegment event) {
        try {
            return (int) hipEventSynchronize.HANDLE.invokeExact(hipEventSynchronize$ADDR, event);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipEventQuery {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipEventQuery(hipEvent_t event)}: Returns success if {@code event} has completed, the not-ready error (600) if not.
     *
     * @param event hipEvent_t
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipEventQuery(MemorySegment event) {
        try {
            return (int) hipEventQuery.HANDLE.invokeExact(hipEventQuery$ADDR, event);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipEventElapsedTime {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_POINTER, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)}: Writes the milliseconds between two completed events to {@code *ms}.
     *
     * @param ms float *
     * @param start hipEvent_t
     * @param stop hipEvent_t
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipEventElapsedTime(MemorySegment ms, MemorySegment start, MemorySegment stop) {
        try {
            return (int) hipEventElapsedTime.HANDLE.invokeExact(hipEventElapsedTime$ADDR, ms, start, stop);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipEventDestroy {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipEventDestroy(hipEvent_t event)}: Destroys an event.
     *
     * @param event hipEvent_t
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipEventDestroy(MemorySegment event) {
        try {
            return (int) hipEventDestroy.HANDLE.invokeExact(hipEventDestroy$ADDR, event);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipDeviceSynchronize {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipDeviceSynchronize(void)}: Blocks until all work on the current device has completed.
     *
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipDeviceSynchronize() {
        try {
            return (int) hipDeviceSynchronize.HANDLE.invokeExact(hipDeviceSynchronize$ADDR);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipGetErrorName {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_POINTER, C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code const char * hipGetErrorName(hipError_t error)}: Returns the symbolic name of an error code, a static NUL-terminated string.
     *
     * @param error hipError_t
     * @return a static NUL-terminated string (never freed)
     */
    public MemorySegment hipGetErrorName(int error) {
        try {
            return (MemorySegment) hipGetErrorName.HANDLE.invokeExact(hipGetErrorName$ADDR, error);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipGetErrorString {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_POINTER, C_INT);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code const char * hipGetErrorString(hipError_t error)}: Returns a description of an error code, a static NUL-terminated string.
     *
     * @param error hipError_t
     * @return a static NUL-terminated string (never freed)
     */
    public MemorySegment hipGetErrorString(int error) {
        try {
            return (MemorySegment) hipGetErrorString.HANDLE.invokeExact(hipGetErrorString$ADDR, error);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hipRuntimeGetVersion {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER);
        public static final MethodHandle HANDLE = LINKER.downcallHandle(DESC);
    }

    /**
     * {@code hipError_t hipRuntimeGetVersion(int *runtimeVersion)}: Writes the runtime version number to {@code *runtimeVersion}.
     *
     * @param runtimeVersion int *
     * @return {@code hipSuccess} (0) or an error code
     */
    public int hipRuntimeGetVersion(MemorySegment runtimeVersion) {
        try {
            return (int) hipRuntimeGetVersion.HANDLE.invokeExact(hipRuntimeGetVersion$ADDR, runtimeVersion);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }
}
