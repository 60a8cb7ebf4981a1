package io.tierkv.natives.runtime;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.natives.GpuException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * What one runtime has handed out and not yet seen closed, so the runtime's close frees each
 * remaining resource exactly once: streams first (their queued work drains), then events, then
 * buffers.
 *
 * <p>Thread-safety: all methods are thread-safe; resources are closed outside the lock, and their
 * own close calls {@link #remove(AutoCloseable)}.
 */
public final class OwnedResources {

    /** The order in which {@link #closeAll()} closes resources. */
    public enum Phase {
        /** Streams: closing drains their queues. */
        STREAM,
        /** Events. */
        EVENT,
        /** Device and pinned host buffers. */
        BUFFER
    }

    private final String ownerName;
    @GuardedBy("this")
    private final List<LinkedHashSet<AutoCloseable>> live = List.of(
            new LinkedHashSet<>(), new LinkedHashSet<>(), new LinkedHashSet<>());
    @GuardedBy("this") private boolean closed;

    /**
     * Creates an empty set.
     *
     * @param ownerName the runtime's name, for messages
     */
    public OwnedResources(String ownerName) {
        this.ownerName = ownerName;
    }

    /**
     * Registers a new resource.
     *
     * @param resource the resource; its close must call {@link #remove(AutoCloseable)}
     * @param phase when {@link #closeAll()} closes it
     * @throws IllegalStateException if the owner is already closed (the caller then frees the
     *     resource itself)
     */
    public synchronized void add(AutoCloseable resource, Phase phase) {
        if (closed) {
            throw new IllegalStateException(ownerName + " runtime is closed");
        }
        live.get(phase.ordinal()).add(resource);
    }

    /**
     * Forgets a resource that was closed on its own.
     *
     * @param resource the resource
     * @return true if it was registered
     */
    public synchronized boolean remove(AutoCloseable resource) {
        for (LinkedHashSet<AutoCloseable> set : live) {
            if (set.remove(resource)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@link #closeAll()} has begun.
     *
     * @return true once closing
     */
    public synchronized boolean isClosed() {
        return closed;
    }

    /**
     * Resources still registered.
     *
     * @return how many are open
     */
    public synchronized int size() {
        return live.stream().mapToInt(LinkedHashSet::size).sum();
    }

    /**
     * Refuses further registrations and closes every registered resource in phase order. Every
     * resource is attempted even if some fail.
     *
     * @throws GpuException the first {@link GpuException} raised, with the others suppressed
     * @throws RuntimeException the first other runtime exception, if no GpuException occurred
     */
    public void closeAll() {
        List<AutoCloseable> snapshot = new ArrayList<>();
        synchronized (this) {
            closed = true;
            for (LinkedHashSet<AutoCloseable> set : live) {
                snapshot.addAll(set);
            }
        }
        RuntimeException first = null;
        for (AutoCloseable resource : snapshot) {
            try {
                resource.close();
            } catch (Exception e) {
                RuntimeException re = e instanceof RuntimeException r ? r : new IllegalStateException(e);
                if (first == null) {
                    first = re;
                } else if (re instanceof GpuException && !(first instanceof GpuException)) {
                    re.addSuppressed(first);
                    first = re;
                } else {
                    first.addSuppressed(re);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
