package io.tierkv.core.budget;

import io.tierkv.core.error.MachineLimitException;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * What this machine's memory can give now, for the checks that run before a pool is committed
 * (every pool is allocated whole and zero-filled at build, so a pool that does not fit would be
 * killed by the kernel's OOM killer page by page, not refused).
 *
 * <p>The figures: {@code MemAvailable} from {@code /proc/meminfo} (the kernel's estimate of memory
 * that can be handed out without swapping: free memory plus reclaimable page cache and slab),
 * lowered to the container's free memory when the JVM reports a container memory limit below
 * {@code MemTotal} (cgroups v1 or v2, as {@code com.sun.management.OperatingSystemMXBean} reads
 * them: limit minus usage, page cache included, so it errs low); and the JVM's heap, which may
 * still grow to {@code -Xmx} and takes its pages from the same memory.
 *
 * <p>What pools may commit ({@link #poolBytes()}): available minus the heap the JVM has not yet
 * committed minus a reserve ({@link #reserveBytes()}: 1/32 of {@code MemTotal}, at least 256 MiB
 * and at most 2 GiB) for the JVM's own native memory (metaspace, code cache, thread stacks, GC),
 * the pools' page tables and other processes' growth.
 *
 * @param availableBytes       memory that can be handed out now, {@code >= 0}
 * @param totalBytes           the machine's memory ({@code MemTotal}), {@code >= availableBytes}
 * @param source               where {@code availableBytes} comes from, for messages
 * @param heapUncommittedBytes heap the JVM may still commit: {@code -Xmx} minus the heap committed now, {@code >= 0}
 * @param heapMaxBytes         the most heap the JVM will use ({@code -Xmx}), {@code >= heapUncommittedBytes}
 */
public record MachineMemory(long availableBytes, long totalBytes, String source, long heapUncommittedBytes,
        long heapMaxBytes) {

    /** Smallest reserve kept out of {@link #poolBytes()}: 256 MiB. */
    public static final long MIN_RESERVE_BYTES = 256L << 20;
    /** Largest reserve kept out of {@link #poolBytes()}: 2 GiB. */
    public static final long MAX_RESERVE_BYTES = 2L << 30;

    /**
     * Validates the figures.
     *
     * @throws IllegalArgumentException naming the field, its value and the bound
     * @throws NullPointerException     if source is null
     */
    public MachineMemory {
        java.util.Objects.requireNonNull(source, "source");
        if (totalBytes < 0) {
            throw new IllegalArgumentException("totalBytes: " + totalBytes + " (expected >= 0)");
        }
        if (availableBytes < 0 || availableBytes > totalBytes) {
            throw new IllegalArgumentException("availableBytes: " + availableBytes + " (expected 0 <= availableBytes"
                    + " <= totalBytes " + totalBytes + ")");
        }
        if (heapUncommittedBytes < 0) {
            throw new IllegalArgumentException("heapUncommittedBytes: " + heapUncommittedBytes + " (expected >= 0)");
        }
        if (heapMaxBytes < heapUncommittedBytes) {
            throw new IllegalArgumentException("heapMaxBytes: " + heapMaxBytes
                    + " (expected >= heapUncommittedBytes " + heapUncommittedBytes + ")");
        }
    }

    /**
     * Reads the figures now: {@code /proc/meminfo}, the JVM's container view and its heap.
     *
     * @return the figures, or empty where {@code /proc/meminfo} cannot be read or has no
     *         {@code MemAvailable} (not Linux, or a kernel older than 3.14): nothing is checked then
     */
    public static Optional<MachineMemory> now() {
        List<String> lines;
        try {
            lines = Files.readAllLines(Path.of("/proc/meminfo"));
        } catch (IOException | SecurityException e) {
            return Optional.empty();
        }
        long containerTotal = -1;
        long containerFree = -1;
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            containerTotal = os.getTotalMemorySize();
            containerFree = os.getFreeMemorySize();
        }
        Runtime rt = Runtime.getRuntime();
        long max = rt.maxMemory();
        return parse(lines, containerTotal, containerFree, Math.max(0, max - rt.totalMemory()), max);
    }

    /**
     * Builds the figures from the text of {@code /proc/meminfo} and the JVM's view.
     *
     * @param meminfo              the lines of {@code /proc/meminfo}
     * @param jvmTotalBytes        total memory as the JVM reports it (the container's limit when
     *                             one applies), or -1 if unknown
     * @param jvmFreeBytes         free memory as the JVM reports it (the container's limit minus
     *                             its usage when one applies), or -1 if unknown
     * @param heapUncommittedBytes heap the JVM may still commit, {@code >= 0}
     * @param heapMaxBytes         the most heap the JVM will use, {@code >= heapUncommittedBytes}
     * @return the figures; empty without {@code MemTotal} and {@code MemAvailable}
     */
    public static Optional<MachineMemory> parse(List<String> meminfo, long jvmTotalBytes, long jvmFreeBytes,
            long heapUncommittedBytes, long heapMaxBytes) {
        long total = field(meminfo, "MemTotal:");
        long available = field(meminfo, "MemAvailable:");
        if (total < 0 || available < 0) {
            return Optional.empty();
        }
        available = Math.min(available, total);
        String source = "MemAvailable " + format(available);
        if (jvmTotalBytes > 0 && jvmTotalBytes < total && jvmFreeBytes >= 0 && jvmFreeBytes < available) {
            available = jvmFreeBytes;
            source = "the container's memory limit " + format(jvmTotalBytes) + " minus its usage";
        }
        return Optional.of(new MachineMemory(available, total, source, heapUncommittedBytes, heapMaxBytes));
    }

    /** {@return a {@code /proc/meminfo} field in bytes ({@code kB} lines), or -1 if absent or malformed} */
    private static long field(List<String> meminfo, String name) {
        for (String line : meminfo) {
            if (line.startsWith(name)) {
                String v = line.substring(name.length()).trim();
                long unit = 1;
                if (v.endsWith("kB")) {
                    unit = 1024;
                    v = v.substring(0, v.length() - 2).trim();
                }
                try {
                    return Math.multiplyExact(Long.parseLong(v), unit);
                } catch (NumberFormatException | ArithmeticException e) {
                    return -1;
                }
            }
        }
        return -1;
    }

    /** {@return the reserve kept out of {@link #poolBytes()}: 1/32 of totalBytes, in [256 MiB, 2 GiB]} */
    public long reserveBytes() {
        return Math.max(MIN_RESERVE_BYTES, Math.min(MAX_RESERVE_BYTES, totalBytes / 32));
    }

    /**
     * What pools may commit now: available, minus the heap the JVM may still commit, minus the
     * reserve; never negative.
     *
     * @return bytes
     */
    public long poolBytes() {
        return Math.max(0, availableBytes - heapUncommittedBytes - reserveBytes());
    }

    /**
     * How {@link #poolBytes()} is made up, for messages: for example {@code MemAvailable 23.2 GiB
     * - 5.61 GiB of heap the JVM may still commit (-Xmx) - 768 MiB reserve}.
     *
     * @return the text
     */
    public String poolBytesText() {
        return source + " - " + format(heapUncommittedBytes) + " of heap the JVM may still commit (-Xmx) - "
                + format(reserveBytes()) + " reserve";
    }

    /**
     * Refuses host memory that does not fit {@link #poolBytes()}.
     *
     * @param option        the option to blame, as the builder names it (for example
     *                      {@code host.budgetBytes})
     * @param valueBytes    that option's value in bytes
     * @param requiredBytes host memory the build would commit, everything included
     * @param terms         how requiredBytes is made up, for the message (for example {@code 16.0 GiB
     *                      = pinned host 16.0 GiB + transfer staging 2.00 MiB})
     * @throws MachineLimitException if requiredBytes exceeds {@link #poolBytes()}
     */
    public void checkHost(String option, long valueBytes, long requiredBytes, String terms) {
        if (requiredBytes > poolBytes()) {
            throw new MachineLimitException(option, valueBytes, "host memory", requiredBytes, poolBytes(),
                    "needs " + terms + "; available " + format(poolBytes()) + " = " + poolBytesText());
        }
    }

    /**
     * Formats a byte count with a binary unit as the messages do: {@code 512 B}, {@code 1.50 GiB},
     * {@code 23.2 GiB}, {@code 10.0 TiB} (three significant digits).
     *
     * @param bytes a byte count, {@code >= 0}
     * @return the text
     */
    public static String format(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        double v = bytes;
        int i = 0;
        while (v >= 1024 && i < units.length - 1) {
            v /= 1024;
            i++;
        }
        if (i == 0) {
            return bytes + " B";
        }
        String pattern = v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s";
        return String.format(Locale.ROOT, pattern, v, units[i]);
    }
}
