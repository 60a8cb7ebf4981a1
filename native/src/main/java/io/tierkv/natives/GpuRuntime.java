package io.tierkv.natives;

/**
 * One GPU (or the emulated device) as the tiers see it: device memory, pinned host memory, and
 * streams that copy between them asynchronously.
 *
 * <p>Implementations: the HIP runtime ({@code libamdhip64}), the CUDA runtime ({@code libcudart})
 * and {@link EmulatedDevice} (host memory, for machines without a GPU). Obtain a real one with
 * {@link GpuRuntimes#detect()}.
 *
 * <p>Ownership: every buffer, stream and event this runtime hands out is owned by it. Each can be
 * closed on its own (exactly once; a second close is a no-op), and {@link #close()} closes all
 * that are still open, so nothing leaks past the runtime. Using any of them after it (or the
 * runtime) was closed throws {@link IllegalStateException}, never touches freed memory.
 *
 * <p>Failures: a call the runtime refuses throws {@link GpuException} with the API's error code;
 * {@link GpuException#isOutOfMemory()} marks a capacity failure the caller can handle by freeing
 * memory. Invalid arguments (negative sizes, ranges outside a buffer) throw
 * {@link IllegalArgumentException} before any native call.
 *
 * <p>Thread-safety: implementations are thread-safe. A real runtime is bound to device 0 (the
 * first visible device); use {@code HIP_VISIBLE_DEVICES} / {@code CUDA_VISIBLE_DEVICES} to choose.
 */
public interface GpuRuntime extends AutoCloseable {

    /**
     * The runtime's name.
     *
     * @return {@code "HIP"}, {@code "CUDA"} or {@code "EMULATED"}
     */
    String name();

    /**
     * Devices the runtime can see (this runtime uses the first).
     *
     * @return at least 1
     * @throws GpuException if the runtime fails to answer
     * @throws IllegalStateException if the runtime is closed
     */
    int deviceCount();

    /**
     * Free and total memory of this runtime's device, in bytes, as the runtime reports it now (other
     * processes may use the same device).
     *
     * @return the current figures
     * @throws GpuException if the runtime fails to answer
     * @throws IllegalStateException if the runtime is closed
     */
    MemoryInfo memoryInfo();

    /**
     * Whether this runtime's device memory is host memory (the emulated device): its device
     * buffers then take the machine's RAM, and a budget for them is checked against
     * {@code MemAvailable} as well as against {@link #memoryInfo()}.
     *
     * @return true for the emulated device; false (the default) for a GPU's own memory
     */
    default boolean deviceMemoryIsHostMemory() {
        return false;
    }

    /**
     * Allocates device memory ({@code hipMalloc}, {@code cudaMalloc}; on the emulated device a zero
     * host segment whose pages are committed on first touch).
     *
     * @param bytes size in bytes, {@code > 0}
     * @return a buffer owned by this runtime
     * @throws IllegalArgumentException if {@code bytes <= 0}
     * @throws GpuException if the allocation fails; {@link GpuException#isOutOfMemory()} is true
     *     when it does not fit
     * @throws IllegalStateException if the runtime is closed
     */
    DeviceBuffer allocateDevice(long bytes);

    /**
     * Allocates page-locked host memory the device can copy from and to at full speed
     * ({@code hipHostMalloc}, {@code cudaHostAlloc}; on the emulated device: page-aligned memory
     * locked with {@code mlock} where {@code RLIMIT_MEMLOCK} allows, see {@link HostMemory}).
     *
     * @param bytes size in bytes, {@code > 0}
     * @return a buffer owned by this runtime
     * @throws IllegalArgumentException if {@code bytes <= 0}
     * @throws GpuException if the allocation fails
     * @throws IllegalStateException if the runtime is closed
     */
    PinnedHostBuffer allocatePinnedHost(long bytes);

    /**
     * Creates a stream: a queue of copies that run in the order they were queued.
     *
     * @return a stream owned by this runtime
     * @throws GpuException if the runtime cannot create one
     * @throws IllegalStateException if the runtime is closed
     */
    GpuStream createStream();

    /**
     * Waits for queued work, then frees every buffer, stream and event still open, each exactly
     * once, and releases the runtime. A second call is a no-op.
     *
     * @throws GpuException if a free fails (the remaining resources are still freed)
     */
    @Override
    void close();
}
