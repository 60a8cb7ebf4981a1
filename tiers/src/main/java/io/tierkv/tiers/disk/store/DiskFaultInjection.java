package io.tierkv.tiers.disk.store;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.tiers.disk.DiskStats;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A test hook for fault-injection runs ({@code tierkv soak --corrupt-rate}): while installed, each
 * record that a disk tier of this JVM is about to verify has, with probability {@link #rate()},
 * one bit of one byte flipped inside the bytes that the verification covers, as a flaky device or
 * a stray write would leave it. The verifications are the load of a block ({@link DiskTier#load},
 * {@link DiskTier#get}: header, identity and payload), a match ({@link DiskTier#match}: header and
 * identity) and a put that finds the key already stored (header and identity, and the payload too
 * for a pinning put). The flip is made in the segment's shared mapping, so it reaches the file.
 *
 * <p>Nothing else changes: the tier's real checks find the damage (the header checksum, the
 * identity comparison, the CRC32C of identity and payload) and its real corruption path runs:
 * a counted corrupt miss ({@link DiskStats#corruptMisses()}), quarantine, the eviction notice, and
 * whatever the manager above does with a block whose record is gone. A single flipped bit is
 * always caught by CRC32C, and every damaged record is verified at once by the call that damaged
 * it, so {@link #injected()} equals the sum of {@code corruptMisses} over the tiers open while it
 * was installed (plus any damage that was on disk already).
 *
 * <p>Never install it outside a test or a soak: it destroys stored blocks on purpose. At most one
 * is installed at a time; it costs one volatile read per verification when none is.
 *
 * <p>Thread-safe.
 */
public final class DiskFaultInjection {

    private static volatile DiskFaultInjection installed;

    private final double rate;
    @GuardedBy("this") private final Random random;
    private final AtomicLong injected = new AtomicLong();

    private DiskFaultInjection(double rate, long seed) {
        this.rate = rate;
        this.random = new Random(seed);
    }

    /**
     * Installs an injector for every disk tier of this JVM, open now or later, until
     * {@link #uninstall()}.
     *
     * @param rate the fraction of verifications that find their record damaged, in {@code (0, 1]}
     * @param seed the seed of the choices (which verification, which byte and bit); thread
     *             scheduling still varies the order
     * @return the injector, installed
     * @throws IllegalArgumentException if {@code rate} is not in {@code (0, 1]}
     * @throws IllegalStateException    if another injector is installed
     */
    public static DiskFaultInjection install(double rate, long seed) {
        if (!(rate > 0 && rate <= 1)) {
            throw new IllegalArgumentException("rate: " + rate + " (expected 0 < rate <= 1)");
        }
        DiskFaultInjection f = new DiskFaultInjection(rate, seed);
        synchronized (DiskFaultInjection.class) {
            if (installed != null) {
                throw new IllegalStateException("a disk fault injector is installed already (rate "
                        + installed.rate + ")");
            }
            installed = f;
        }
        return f;
    }

    /** Removes this injector, if it is the one installed; idempotent. What it damaged stays damaged. */
    public void uninstall() {
        synchronized (DiskFaultInjection.class) {
            if (installed == this) {
                installed = null;
            }
        }
    }

    /** {@return the fraction of verifications that find their record damaged} */
    public double rate() {
        return rate;
    }

    /** {@return records damaged so far} */
    public long injected() {
        return injected.get();
    }

    /**
     * Called by a disk tier (under its lock) just before it verifies the bytes
     * {@code [offset, offset + coveredBytes)} of a record in a segment's mapping; with the
     * installed injector's probability, flips one bit of one of them.
     *
     * @param map          the segment's mapping
     * @param offset       the record's offset in it
     * @param coveredBytes bytes from {@code offset} that the verification covers, {@code > 0}
     */
    static void beforeVerify(MemorySegment map, long offset, long coveredBytes) {
        DiskFaultInjection f = installed;
        if (f != null) {
            f.maybeDamage(map, offset, coveredBytes);
        }
    }

    private synchronized void maybeDamage(MemorySegment map, long offset, long coveredBytes) {
        if (random.nextDouble() >= rate) {
            return;
        }
        long at = offset + random.nextLong(coveredBytes);
        byte b = map.get(ValueLayout.JAVA_BYTE, at);
        map.set(ValueLayout.JAVA_BYTE, at, (byte) (b ^ (1 << random.nextInt(8))));
        injected.incrementAndGet();
    }
}
