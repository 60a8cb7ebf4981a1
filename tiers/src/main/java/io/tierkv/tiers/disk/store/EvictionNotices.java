package io.tierkv.tiers.disk.store;

import java.util.Arrays;

/**
 * Keys the disk tier dropped on its own, held per thread while the tier's lock is held and handed
 * to the {@link EvictionListener} after it is released, on the thread whose call caused
 * them, in the order they were dropped (so a listener may call back into the tier).
 *
 * <p>Thread-safe: each thread has its own list; the listener field is volatile.
 */
final class EvictionNotices {

    private final ThreadLocal<Pending> pending = ThreadLocal.withInitial(Pending::new);
    private volatile EvictionListener listener;

    /**
     * Sets the listener; {@code null} for none.
     *
     * @param l the listener
     */
    void setListener(EvictionListener l) {
        this.listener = l;
    }

    /**
     * Queues a key on the calling thread's list.
     *
     * @param hi block hash, high 64 bits
     * @param lo block hash, low 64 bits
     */
    void add(long hi, long lo) {
        pending.get().add(hi, lo);
    }

    /** Forgets the calling thread's queued keys (what recovery dropped concerns no listener yet). */
    void clear() {
        pending.get().size = 0;
    }

    /** Hands the calling thread's queued keys to the listener; call with the tier's lock released. */
    void deliver() {
        Pending p = pending.get();
        if (p.size == 0) {
            return;
        }
        long[] keys = Arrays.copyOf(p.keys, p.size);
        p.size = 0;
        EvictionListener l = listener;
        if (l == null) {
            return;
        }
        for (int i = 0; i < keys.length; i += 2) {
            l.evicted(keys[i], keys[i + 1]);
        }
    }

    /** One thread's keys, (hi, lo) pairs. */
    private static final class Pending {
        long[] keys = new long[32];
        int size;

        void add(long hi, long lo) {
            if (size + 2 > keys.length) {
                keys = Arrays.copyOf(keys, keys.length * 2);
            }
            keys[size++] = hi;
            keys[size++] = lo;
        }
    }
}
