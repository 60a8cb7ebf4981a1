package io.tierkv.core.policy;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Bytes allocated on the heap by the current thread, from HotSpot's
 * {@code com.sun.management.ThreadMXBean#getCurrentThreadAllocatedBytes()}.
 *
 * <p>Reached reflectively: test sources are compiled inside module {@code io.tierkv.core}, which
 * (being JDK-only by design) does not read {@code java.management}; the tests themselves run on
 * the class path, where the bean is accessible.
 */
final class AllocationCounter {

    private static final MethodHandle CURRENT_THREAD_ALLOCATED_BYTES = lookup();

    static {
        // A method handle's call path is interpreted, then compiled after a number of calls, and
        // compiling it allocates on the calling thread: get that done before anyone measures.
        long sum = 0;
        for (int i = 0; i < 20_000; i++) {
            sum += currentThreadAllocatedBytes();
        }
        if (sum < 0) {
            throw new IllegalStateException("negative allocation counter");
        }
    }

    private AllocationCounter() {
    }

    private static MethodHandle lookup() {
        try {
            Object bean = Class.forName("java.lang.management.ManagementFactory")
                    .getMethod("getThreadMXBean").invoke(null);
            Class<?> type = Class.forName("com.sun.management.ThreadMXBean");
            return MethodHandles.publicLookup()
                    .findVirtual(type, "getCurrentThreadAllocatedBytes", MethodType.methodType(long.class))
                    .bindTo(bean);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("HotSpot's per-thread allocation counter is unavailable", e);
        }
    }

    /** @return bytes allocated by the current thread so far */
    static long currentThreadAllocatedBytes() {
        try {
            return (long) CURRENT_THREAD_ALLOCATED_BYTES.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
