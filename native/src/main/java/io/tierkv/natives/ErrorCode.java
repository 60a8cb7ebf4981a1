package io.tierkv.natives;

/**
 * One error code of a GPU API, as its enum constant: the number the C call returned and the
 * symbolic C name ({@code hipErrorNoDevice}, {@code cudaErrorMemoryAllocation}).
 *
 * <p>Implemented by the enums {@code HipError}, {@code CudaError} and {@code EmulatedError};
 * constants are immutable and thread-safe.
 */
public interface ErrorCode {

    /**
     * The numeric code as the C API returns it.
     *
     * @return the code; 0 is success
     */
    int code();

    /**
     * The symbolic C name of the code.
     *
     * @return for example {@code "hipErrorNoDevice"}; for a code the enum does not list,
     *     the unknown constant's name
     */
    String cName();

    /**
     * Whether the code says the allocation failed for lack of memory (code 2 in HIP, CUDA and the
     * emulated device), a capacity failure a caller can handle by freeing memory.
     *
     * @return true for an out-of-memory code
     */
    default boolean isOutOfMemory() {
        return code() == 2;
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
