package io.tierkv.natives.testing;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The fake HIP/CUDA runtime of {@code src/test/c/fakegpu.c}, compiled with gcc into
 * {@code target/fake-gpu/libfakegpu.so} on first use (once per JVM, again when the source is newer),
 * and its test controls.
 *
 * <p>Without gcc the tests that need it are skipped with a message, or fail under {@code CI=true}.
 */
@SuppressWarnings("restricted")
public final class FakeGpuLibrary {

    private static final Linker LINKER = Linker.nativeLinker();
    private static Path library;
    private static SymbolLookup lookup;

    private FakeGpuLibrary() {}

    /**
     * The compiled library, building it if needed.
     *
     * @return its absolute path
     */
    public static synchronized Path path() {
        if (library == null) {
            library = build();
            lookup = SymbolLookup.libraryLookup(library, Arena.global());
        }
        return library;
    }

    private static Path build() {
        Path source = Path.of("src/test/c/fakegpu.c").toAbsolutePath();
        Path out = Path.of("target/fake-gpu/libfakegpu.so").toAbsolutePath();
        try {
            if (!Files.exists(source)) {
                fail("fake GPU library source not found: " + source);
            }
            if (Files.exists(out) && Files.getLastModifiedTime(out).compareTo(Files.getLastModifiedTime(source)) > 0) {
                return out;
            }
            Files.createDirectories(out.getParent());
            Path log = out.resolveSibling("gcc.log");
            Process gcc;
            try {
                gcc = new ProcessBuilder(List.of("gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
                        "-o", out.toString(), source.toString(), "-lpthread"))
                        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            } catch (IOException noGcc) {
                String why = "gcc not available to build the fake GPU library: " + noGcc.getMessage();
                if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                    fail(why + " (CI=true requires gcc)");
                }
                return abort(why);
            }
            if (!gcc.waitFor(120, TimeUnit.SECONDS)) {
                gcc.destroyForcibly();
                fail("gcc timed out building " + out);
            }
            if (gcc.exitValue() != 0) {
                fail("gcc failed (" + gcc.exitValue() + "): " + Files.readString(log, StandardCharsets.UTF_8));
            }
            return out;
        } catch (IOException e) {
            return fail("cannot build the fake GPU library", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail("interrupted building the fake GPU library", e);
        }
    }

    private static MethodHandle handle(String name, FunctionDescriptor desc) {
        path();
        return LINKER.downcallHandle(lookup.find(name).orElseThrow(), desc);
    }

    /** Forgets all state: 1 device, 256 MiB, no failures, counters zero. */
    public static void reset() {
        try {
            handle("fake_reset", FunctionDescriptor.ofVoid()).invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Selects HIP's device-count behaviour in {@link #setDevices}. */
    public static final int HIP = 0;
    /** Selects CUDA's device-count behaviour in {@link #setDevices}. */
    public static final int CUDA = 1;
    /** Selects both APIs in {@link #setDevices}. */
    public static final int BOTH = -1;

    /**
     * Sets what the device-count calls return.
     *
     * @param api {@link #HIP}, {@link #CUDA} or {@link #BOTH}
     * @param count devices
     * @param rc the error code returned
     * @param writeCount whether {@code *count} is written
     */
    public static void setDevices(int api, int count, int rc, boolean writeCount) {
        try {
            handle("fake_set_devices", FunctionDescriptor.ofVoid(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT)).invokeExact(api, count, rc, writeCount ? 1 : 0);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * Sets the fake device's capacity.
     *
     * @param bytes total device memory
     */
    public static void setTotalMemory(long bytes) {
        try {
            handle("fake_set_total_memory", FunctionDescriptor.ofVoid(ValueLayout.JAVA_LONG)).invokeExact(bytes);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * Makes the next call of {@code name} fail.
     *
     * @param name the neutral call name, for example {@code "malloc"} or {@code "memcpyAsync"}
     * @param code the error code it returns
     */
    public static void failNext(String name, int code) {
        try (Arena arena = Arena.ofConfined()) {
            handle("fake_fail_next", FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.JAVA_INT))
                    .invokeExact(arena.allocateFrom(name), code);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * Makes the next {@code n} event queries answer not-ready.
     *
     * @param n queries
     */
    public static void setEventPending(int n) {
        try {
            handle("fake_set_event_pending", FunctionDescriptor.ofVoid(ValueLayout.JAVA_INT)).invokeExact(n);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * How often a call was made since the last reset (HIP and CUDA together).
     *
     * @param name the neutral call name
     * @return the count
     */
    public static long calls(String name) {
        try (Arena arena = Arena.ofConfined()) {
            return (long) handle("fake_calls", FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS))
                    .invokeExact(arena.allocateFrom(name));
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    private static long counter(String name) {
        try {
            return (long) handle(name, FunctionDescriptor.of(ValueLayout.JAVA_LONG)).invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** @return device allocations not freed */
    public static long liveDeviceAllocations() {
        return counter("fake_live_device_allocations");
    }

    /** @return device bytes not freed */
    public static long liveDeviceBytes() {
        return counter("fake_live_device_bytes");
    }

    /** @return pinned host allocations not freed */
    public static long liveHostAllocations() {
        return counter("fake_live_host_allocations");
    }

    /** @return streams not destroyed */
    public static long liveStreams() {
        return counter("fake_live_streams");
    }

    /** @return events not destroyed */
    public static long liveEvents() {
        return counter("fake_live_events");
    }

    /**
     * Whether a segment's address lies in a device allocation of the fake (for tests that need to
     * know the fake holds host memory behind "device" pointers).
     *
     * @param address an address
     * @param bytes bytes from it
     * @return a segment over the fake device memory (it is host memory in the fake)
     */
    public static MemorySegment deviceMemoryAsHost(long address, long bytes) {
        return MemorySegment.ofAddress(address).reinterpret(bytes);
    }
}
