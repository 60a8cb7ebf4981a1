package io.tierkv.core.testing;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Locates the real data in {@code ../shared/data} for tests.
 *
 * <p>On a fresh clone the folder is absent and such tests are skipped (reported as skipped, never
 * as passed); under CI ({@code CI=true}) a missing folder fails the test instead, so CI cannot go
 * green without the data. The folder is found through the {@code tierkv.shared.dir} system
 * property (set by surefire to {@code <project>/../shared}), else {@code ../shared} and
 * {@code ../../shared} relative to the working directory.
 */
public final class SharedData {

    private SharedData() {
    }

    /**
     * Resolves a file or folder under {@code shared/data}, skipping or failing the test if absent.
     *
     * @param relative path below {@code shared/data}, for example {@code traces/mooncake-fast25}
     * @return the existing path
     */
    public static Path require(String relative) {
        Path root = root();
        Path p = root == null ? null : root.resolve("data").resolve(relative);
        if (p != null && Files.exists(p)) {
            return p;
        }
        String why = "shared data not found: " + (p == null ? "shared/ folder absent" : p);
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            fail(why + " (CI=true requires ../shared/data)");
        }
        return abort(why + " (skipped on a fresh clone)");
    }

    private static Path root() {
        String prop = System.getProperty("tierkv.shared.dir");
        for (String candidate : new String[] {prop, "../shared", "../../shared"}) {
            if (candidate != null && Files.isDirectory(Path.of(candidate))) {
                return Path.of(candidate).toAbsolutePath().normalize();
            }
        }
        return null;
    }
}
