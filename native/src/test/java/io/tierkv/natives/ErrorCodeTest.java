package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.natives.cuda.CudaError;
import io.tierkv.natives.emulated.EmulatedError;
import io.tierkv.natives.hip.HipError;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The C names {@link ErrorCode#cName()} derives are the names the enums used to spell out (and
 * the headers use: BindingSignaturesTest checks them with gcc where HIP and CUDA are installed;
 * this pins them where they are not, as under CI for CUDA), and the shared lookup and
 * out-of-memory test answer per API.
 */
class ErrorCodeTest {

    private static List<String> cNames(ErrorCode[] codes) {
        return Arrays.stream(codes).map(ErrorCode::cName).toList();
    }

    @Test
    void everyCNameIsThePrefixThenSuccessOrErrorAndTheCamelCaseName() {
        assertEquals(List.of("cudaSuccess", "cudaErrorInvalidValue", "cudaErrorMemoryAllocation",
                "cudaErrorInitializationError", "cudaErrorCudartUnloading", "cudaErrorInvalidConfiguration",
                "cudaErrorInvalidDevicePointer", "cudaErrorInvalidMemcpyDirection", "cudaErrorStubLibrary",
                "cudaErrorInsufficientDriver", "cudaErrorDevicesUnavailable", "cudaErrorNoDevice",
                "cudaErrorInvalidDevice", "cudaErrorInvalidResourceHandle", "cudaErrorNotReady",
                "cudaErrorIllegalAddress", "cudaErrorHostMemoryAlreadyRegistered",
                "cudaErrorHostMemoryNotRegistered", "cudaErrorLaunchFailure", "cudaErrorNotSupported",
                "cudaErrorSystemDriverMismatch", "cudaErrorUnknown"), cNames(CudaError.values()));
        assertEquals(List.of("hipSuccess", "hipErrorInvalidValue", "hipErrorOutOfMemory", "hipErrorNotInitialized",
                "hipErrorDeinitialized", "hipErrorInvalidConfiguration", "hipErrorInvalidDevicePointer",
                "hipErrorInvalidMemcpyDirection", "hipErrorInsufficientDriver", "hipErrorNoDevice",
                "hipErrorInvalidDevice", "hipErrorInvalidContext", "hipErrorInvalidHandle", "hipErrorNotFound",
                "hipErrorNotReady", "hipErrorIllegalAddress", "hipErrorHostMemoryAlreadyRegistered",
                "hipErrorHostMemoryNotRegistered", "hipErrorLaunchFailure", "hipErrorNotSupported",
                "hipErrorUnknown", "hipErrorRuntimeMemory", "hipErrorRuntimeOther"), cNames(HipError.values()));
        assertEquals(List.of("emulatedSuccess", "emulatedErrorInvalidValue", "emulatedErrorOutOfMemory",
                "emulatedErrorNotReady", "emulatedErrorIllegalAddress", "emulatedErrorUnknown"),
                cNames(EmulatedError.values()));
    }

    @Test
    void ofFindsTheConstantByNumberAndMapsUnlistedNumbersToUnknown() {
        assertSame(CudaError.INSUFFICIENT_DRIVER, CudaError.of(35));
        assertSame(HipError.NO_DEVICE, HipError.of(100));
        assertSame(EmulatedError.ILLEGAL_ADDRESS, EmulatedError.of(700));
        assertSame(CudaError.UNKNOWN, CudaError.of(1052)); // HIP's hipErrorRuntimeMemory, not a CUDA code
        assertSame(HipError.UNKNOWN, HipError.of(-1));
        assertSame(EmulatedError.UNKNOWN, EmulatedError.of(35));
    }

    @Test
    void onlyCodeTwoIsOutOfMemoryInEveryApi() {
        assertTrue(HipError.OUT_OF_MEMORY.isOutOfMemory());
        assertTrue(CudaError.MEMORY_ALLOCATION.isOutOfMemory());
        assertTrue(EmulatedError.OUT_OF_MEMORY.isOutOfMemory());
        assertEquals(List.of(HipError.OUT_OF_MEMORY),
                Arrays.stream(HipError.values()).filter(ErrorCode::isOutOfMemory).toList());
        assertEquals(List.of(CudaError.MEMORY_ALLOCATION),
                Arrays.stream(CudaError.values()).filter(ErrorCode::isOutOfMemory).toList());
        assertFalse(EmulatedError.NOT_READY.isOutOfMemory());
    }
}
