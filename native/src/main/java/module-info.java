/** FFM bindings (HIP, CUDA runtime, libc), the {@code GpuRuntime} wrapper and the emulated device. */
module io.tierkv.natives {
}
