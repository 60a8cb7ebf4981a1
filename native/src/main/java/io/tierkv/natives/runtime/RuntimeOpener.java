package io.tierkv.natives.runtime;

import io.tierkv.natives.GpuException;
import io.tierkv.natives.GpuRuntime;
import io.tierkv.natives.LibraryNotFoundException;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.function.BiFunction;

/**
 * Opens one GPU API's runtime library as a {@link GpuRuntime}, in the three ways {@code HipRuntime}
 * and {@code CudaRuntime} offer: by the API's usual sonames, from an explicit path, or from an
 * already loaded library. The API is given as its sonames and a function that binds a loaded
 * library ({@code (lookup, name) -> new HipApi(new hip_h(lookup, name))}); everything else is the
 * same for every API.
 *
 * <p>Immutable and thread-safe.
 */
public final class RuntimeOpener {

    private final List<String> sonames;
    private final BiFunction<SymbolLookup, String, RuntimeApi> bind;

    /**
     * Describes one API.
     *
     * @param sonames the library names to try in order
     * @param bind binds a loaded library (its symbols and the name it loaded from) to the API's calls;
     *     throws {@link UnsatisfiedLinkError} if a symbol is missing
     */
    public RuntimeOpener(List<String> sonames, BiFunction<SymbolLookup, String, RuntimeApi> bind) {
        this.sonames = List.copyOf(sonames);
        this.bind = Objects.requireNonNull(bind, "bind");
    }

    /**
     * Loads the first of the sonames that the dynamic linker finds and opens it.
     *
     * @return the runtime, bound to device 0
     * @throws LibraryNotFoundException if no soname loads
     * @throws GpuException if the library loads but has no usable device
     * @throws UnsatisfiedLinkError if the library lacks one of the bound symbols
     */
    public GpuRuntime open() throws LibraryNotFoundException {
        return open(LibraryLoader.loadFirst(sonames));
    }

    /**
     * Loads the library at an explicit path and opens it.
     *
     * @param library path to a shared library with the API's symbols
     * @return the runtime, bound to device 0
     * @throws LibraryNotFoundException if the file does not load
     * @throws GpuException if the library has no usable device
     * @throws UnsatisfiedLinkError if the library lacks one of the bound symbols
     */
    public GpuRuntime open(Path library) throws LibraryNotFoundException {
        return open(LibraryLoader.loadFirst(List.of(library.toAbsolutePath().toString())));
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
    public GpuRuntime open(SymbolLookup lookup, String libraryName) {
        return NativeGpuRuntime.open(bind.apply(lookup, libraryName));
    }

    private GpuRuntime open(LibraryLoader.Loaded lib) {
        return open(lib.lookup(), lib.name());
    }
}
