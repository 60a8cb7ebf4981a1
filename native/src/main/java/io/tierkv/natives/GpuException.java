package io.tierkv.natives;

/**
 * A GPU runtime call failed: the API, its numeric error code and the code's C name, plus what was
 * being done. For example {@code "HIP hipErrorOutOfMemory (2): hipMalloc(1073741824 bytes): out of
 * memory"}.
 *
 * <p>{@link #isOutOfMemory()} separates a capacity failure the caller can handle (free memory, use
 * a lower tier) from a broken device. Caller bugs (use after close, bad arguments) are not
 * {@code GpuException}s but {@link IllegalStateException} and {@link IllegalArgumentException}.
 */
public final class GpuException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The numeric out-of-memory code, the same in HIP, CUDA and the emulated device. */
    public static final int OUT_OF_MEMORY_CODE = 2;

    private final String api;
    private final int code;
    private final String name;

    /**
     * Creates the exception.
     *
     * @param api {@code "HIP"}, {@code "CUDA"} or {@code "EMULATED"}
     * @param code the error code the call returned
     * @param name the code's C name, for example {@code "hipErrorNoDevice"}
     * @param message the call and its arguments, then the runtime's description
     */
    public GpuException(String api, int code, String name, String message) {
        super(api + " " + name + " (" + code + "): " + message);
        this.api = api;
        this.code = code;
        this.name = name;
    }

    /**
     * The API that failed.
     *
     * @return {@code "HIP"}, {@code "CUDA"} or {@code "EMULATED"}
     */
    public String api() {
        return api;
    }

    /**
     * The numeric error code.
     *
     * @return the code the C call returned
     */
    public int code() {
        return code;
    }

    /**
     * The C name of the error code.
     *
     * @return for example {@code "cudaErrorInsufficientDriver"}
     */
    public String name() {
        return name;
    }

    /**
     * Whether the call failed for lack of device (or pinned) memory.
     *
     * @return true for code {@value #OUT_OF_MEMORY_CODE}
     */
    public boolean isOutOfMemory() {
        return code == OUT_OF_MEMORY_CODE;
    }
}
