package io.tierkv.natives.runtime;

import io.tierkv.natives.LibraryNotFoundException;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Loads the first of several library names or paths that the dynamic linker can open.
 *
 * <p>A name without a slash ({@code libamdhip64.so.6}) is searched like {@code dlopen} does
 * ({@code LD_LIBRARY_PATH}, the ld.so cache, the default directories); a name with a slash is a
 * file path. Loaded libraries stay loaded for the life of the JVM (the global arena): GPU runtimes
 * do not unload cleanly, and a probe loads a library at most once per name.
 *
 * <p>Stateless and thread-safe.
 */
public final class LibraryLoader {

    private LibraryLoader() {}

    /**
     * A library that loaded.
     *
     * @param lookup its symbols
     * @param name the name or path that loaded
     */
    public record Loaded(SymbolLookup lookup, String name) {}

    /**
     * Tries each name in order and returns the first that loads.
     *
     * @param names sonames or paths, in order of preference
     * @return the loaded library
     * @throws LibraryNotFoundException if none loads, naming each and the linker's reason
     * @throws IllegalCallerException if native access is denied
     */
    @SuppressWarnings("restricted")
    public static Loaded loadFirst(List<String> names) throws LibraryNotFoundException {
        List<String> failures = new ArrayList<>();
        for (String name : names) {
            try {
                SymbolLookup lookup = name.contains("/")
                        ? SymbolLookup.libraryLookup(Path.of(name), Arena.global())
                        : SymbolLookup.libraryLookup(name, Arena.global());
                return new Loaded(lookup, name);
            } catch (IllegalArgumentException e) {
                failures.add(name + " (" + e.getMessage() + ")");
            }
        }
        throw new LibraryNotFoundException("no library loaded: " + String.join(", ", failures));
    }
}
