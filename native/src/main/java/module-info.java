/**
 * FFM bindings (HIP, CUDA runtime, libc), the {@code GpuRuntime} wrapper and the emulated device.
 *
 * <p>Exported: {@code io.tierkv.natives} (the wrapper API), {@code io.tierkv.natives.libc}
 * (libc calls for the disk and host tiers), {@code io.tierkv.natives.hip} and
 * {@code io.tierkv.natives.cuda} (raw bindings and error enums). Calling into native code needs
 * {@code --enable-native-access=io.tierkv.natives} (module path) or {@code ALL-UNNAMED}
 * (class path).
 */
module io.tierkv.natives {
    requires static com.google.errorprone.annotations; // @GuardedBy: compile time only

    exports io.tierkv.natives;
    exports io.tierkv.natives.hip;
    exports io.tierkv.natives.cuda;
    exports io.tierkv.natives.libc;
}
