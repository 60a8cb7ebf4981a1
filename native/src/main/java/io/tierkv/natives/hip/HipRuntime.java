package io.tierkv.natives.hip;

import io.tierkv.natives.GpuException;
import io.tierkv.natives.LibraryNotFoundException;
import io.tierkv.natives.GpuRuntime;
import io.tierkv.natives.runtime.HipApi;
import io.tierkv.natives.runtime.RuntimeOpener;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Path;
import java.util.List;

/**
 * Opens the HIP runtime ({@code libamdhip64}) as a {@link io.tierkv.natives.GpuRuntime}. Most callers use
 * {@link io.tierkv.natives.GpuRuntimes#detect()} instead, which tries HIP and CUDA and falls back.
 *
 * <p>Stateless and thread-safe. What HIP and CUDA share is {@code RuntimeOpener}; this class names
 * the library and its bindings.
 */
public final class HipRuntime {

    private HipRuntime() {}

    /** Sonames probed in order: the development link, then the ABI versions in use. */
    public static final List<String> SONAMES = List.of("libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5");

    private static final RuntimeOpener OPENER =
            new RuntimeOpener(SONAMES, (lookup, name) -> new HipApi(new hip_h(lookup, name)));

    /**
     * Loads the first of {@link #SONAMES} that the dynamic linker finds and opens it.
     *
     * @return the runtime, bound to device 0
     * @throws LibraryNotFoundException if no soname loads
     * @throws GpuException if the library loads but has no usable device
     * @throws UnsatisfiedLinkError if the library lacks one of the bound symbols
     */
    public static GpuRuntime open() throws LibraryNotFoundException {
        return OPENER.open();
    }

    /**
     * Loads the library at an explicit path (for example a test library) and opens it.
     *
     * @param library path to a shared library with the hip* symbols
     * @return the runtime, bound to device 0
     * @throws LibraryNotFoundException if the file does not load
     * @throws GpuException if the library has no usable device
     * @throws UnsatisfiedLinkError if the library lacks one of the bound symbols
     */
    public static GpuRuntime open(Path library) throws LibraryNotFoundException {
        return OPENER.open(library);
    }

    /**
     * Opens an already loaded library.
     *
     * @param lookup the library's symbols
     * @param libraryName its name or path, for messages
     * @return the runtime, bound to device 0
     * @throws GpuException if the library has no usable device
     * @throws UnsatisfiedLinkError if the library lacks one of the bound symbols
     */
    public static GpuRuntime open(SymbolLookup lookup, String libraryName) {
        return OPENER.open(lookup, libraryName);
    }
}
