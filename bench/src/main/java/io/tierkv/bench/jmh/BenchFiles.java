package io.tierkv.bench.jmh;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Files of the benchmarks' setups: the temporary directories their tiers and plain files live in.
 *
 * <p>Thread-safety: stateless.
 */
final class BenchFiles {

    private BenchFiles() {
    }

    /**
     * Deletes a directory tree (best effort).
     *
     * @param dir the directory, or null
     */
    static void deleteTree(Path dir) {
        if (dir == null) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }
}
