package io.tierkv.core.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tierkv.core.cache.PagedKvCache;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit extension that checks every tracked structure's invariants after each test, then closes
 * it (STYLE.md item 10). Register with {@code @RegisterExtension} and {@link #track} what the test
 * builds; call {@link #check()} between steps for per-step checking.
 */
public final class CacheInvariants implements AfterEachCallback {

    private final List<Supplier<List<String>>> checks = new ArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    /** Creates an extension that tracks nothing yet. */
    public CacheInvariants() {
    }

    /**
     * Tracks a cache: its invariants are checked after the test, then it is closed.
     *
     * @param cache the cache
     * @return the same cache
     */
    public PagedKvCache track(PagedKvCache cache) {
        return track(cache, cache::checkInvariants);
    }

    /**
     * Tracks any structure with an invariant check.
     *
     * @param <T>       its type
     * @param resource  closed after the test
     * @param invariant returns the violations, empty when consistent
     * @return the resource
     */
    public <T extends AutoCloseable> T track(T resource, Supplier<List<String>> invariant) {
        checks.add(invariant);
        closeables.add(resource);
        return resource;
    }

    /** Asserts every tracked structure is consistent now. */
    public void check() {
        for (Supplier<List<String>> c : checks) {
            assertEquals(List.of(), c.get(), "invariant violations");
        }
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        try {
            if (context.getExecutionException().isEmpty()) {
                check();
            }
        } finally {
            for (int i = closeables.size() - 1; i >= 0; i--) {
                closeables.get(i).close();
            }
            checks.clear();
            closeables.clear();
        }
    }
}
