package io.tierkv.natives;

/**
 * One error code of a GPU API, as its enum constant: the number the C call returned and the
 * symbolic C name ({@code hipErrorNoDevice}, {@code cudaErrorMemoryAllocation}).
 *
 * <p>Implemented by the enums {@code HipError}, {@code CudaError} and {@code EmulatedError}, which
 * give only each constant's number and the API's prefix; the C name, the out-of-memory test and
 * the lookup by number are here, once. Constants are immutable and thread-safe.
 */
public interface ErrorCode {

    /**
     * The numeric code as the C API returns it.
     *
     * @return the code; 0 is success
     */
    int code();

    /**
     * The constant's Java name; enums implement it with {@link Enum#name()}.
     *
     * @return for example {@code "NO_DEVICE"}
     */
    String name();

    /**
     * The prefix of the API's C names.
     *
     * @return {@code "hip"}, {@code "cuda"} or {@code "emulated"}
     */
    String cPrefix();

    /**
     * The symbolic C name of the code: the prefix, then {@code Success} for code 0, else
     * {@code Error} and the constant's name in camel case ({@code NO_DEVICE} in HIP:
     * {@code hipErrorNoDevice}; {@code CUDART_UNLOADING} in CUDA: {@code cudaErrorCudartUnloading}).
     * That is how every enumerator of {@code hipError_t} ({@code hip/hip_runtime_api.h}) and
     * {@code cudaError} ({@code driver_types.h}) is named; {@code BindingSignaturesTest} checks the
     * names against the installed headers.
     *
     * @return for example {@code "hipErrorNoDevice"}; for a code the enum does not list,
     *     the unknown constant's name
     */
    default String cName() {
        if (code() == 0) {
            return cPrefix() + "Success";
        }
        StringBuilder c = new StringBuilder(cPrefix()).append("Error");
        for (String word : name().split("_")) {
            c.append(word.charAt(0)).append(word.substring(1).toLowerCase(java.util.Locale.ROOT));
        }
        return c.toString();
    }

    /**
     * Whether the code says the allocation failed for lack of memory
     * ({@link GpuException#OUT_OF_MEMORY_CODE}, 2 in HIP, CUDA and the emulated device), a capacity
     * failure a caller can handle by freeing memory.
     *
     * @return true for an out-of-memory code
     */
    default boolean isOutOfMemory() {
        return code() == GpuException.OUT_OF_MEMORY_CODE;
    }

    /**
     * Looks a numeric code up among an API's constants.
     *
     * @param <E>     the API's error enum
     * @param values  all of its constants
     * @param code    a code returned by the API
     * @param unknown the constant for codes the enum does not list
     * @return the constant with that number, else {@code unknown}
     */
    static <E extends ErrorCode> E lookup(E[] values, int code, E unknown) {
        for (E e : values) {
            if (e.code() == code) {
                return e;
            }
        }
        return unknown;
    }
}
