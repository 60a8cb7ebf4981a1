package io.tierkv.bench.jmh;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.natives.DeviceBuffer;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.natives.PinnedHostBuffer;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.KvBlockManagerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.ToLongFunction;

/**
 * Time and resident memory of {@link KvBlockManagerBuilder#build()} against one zero-filled
 * allocation of the same bytes, in the same JVM (issue 19 part 3), and the cost that build leaves
 * to the first touch of its pools.
 *
 * <p><b>Scenario.</b> Device and host budgets of {@code budgetMiB} each (the emulated device, whose
 * capacity is the device budget; layout 8 layers x 8 KV heads x 64, F16, 16 tokens: 256 KiB blocks;
 * no movers). Three phases per run, each after a pause ({@code pauseMillis}, default 3000: the VM
 * hands memory freed more than about 2 s ago back to the hypervisor, so each phase starts, as a
 * fresh process does, from memory that is slow on first touch) and a {@link System#gc()}, each
 * freed before the next, with {@code VmRSS} ({@code /proc/self/status}) read before and after:
 * <ul>
 * <li>build: {@code build()} of the manager, timed alone;</li>
 * <li>first touch: the same pools as build allocates them ({@code allocateDevice(budget)} and
 * {@code allocatePinnedHost(budget)} of the emulated device) and one write per 4 KiB page of each:
 * what the first block writes into a built manager's pools pay, all together, and what a build that
 * committed its pools (one write per page, into huge pages) would take;</li>
 * <li>the limit: {@code Arena.ofShared().allocate(2 x budget, 4096)}, which the JDK zero-fills,
 * writing every page once (on base pages).</li>
 * </ul>
 * The order of the phases alternates from run to run. Prints every run, the medians, the ratios
 * to the zero-filled allocation (target for build: at most 1.2) and RSS after build against the
 * budgets.
 *
 * <p><b>Worst case.</b> Memory just handed back to the hypervisor: a first touch of it is what
 * costs, most of all for huge pages. Run one size per JVM so that the sizes do not inherit each
 * other's freed pages.
 */
public final class BuildAgainstAllocation {

    private static final long MIB = 1L << 20;

    private BuildAgainstAllocation() {
    }

    /** One phase: its time, the RSS growth in it and the RSS at its end, bytes. */
    private record Phase(long nanos, long growthBytes, long rssBytes) {
    }

    /**
     * Runs the measurement for one size.
     *
     * @param args {@code budgetMiB} (device and host budget each, default 256), optionally the
     *             number of runs (default 3) and the pause before each phase in milliseconds
     *             (default 3000)
     * @throws IllegalArgumentException naming the argument when one is not a positive integer
     * @throws InterruptedException if interrupted in a pause
     */
    public static void main(String[] args) throws InterruptedException {
        long budgetMiB = positive(args, 0, "budgetMiB", 256);
        int runs = (int) positive(args, 1, "runs", 3);
        long pauseMillis = positive(args, 2, "pauseMillis", 3000);
        long budget = budgetMiB * MIB;
        long pools = 2 * budget;
        KvLayout layout = KvLayout.of(8, 8, 64, DType.F16, 16);
        Phase[] builds = new Phase[runs];
        Phase[] touches = new Phase[runs];
        Phase[] allocs = new Phase[runs];
        System.out.printf("device + host budgets %d + %d MiB, %d KiB blocks, %d runs, %d ms pause, max heap %d MiB%n",
                budgetMiB, budgetMiB, layout.bytesPerBlock() >> 10, runs, pauseMillis,
                Runtime.getRuntime().maxMemory() / MIB);
        System.out.println("run | build s | RSS growth MiB | RSS after build MiB | first touch of the pools s"
                + " | RSS growth MiB | zero-filled allocation s | RSS growth MiB");
        for (int r = 0; r < runs; r++) {
            boolean allocFirst = r % 2 == 0;
            if (allocFirst) {
                allocs[r] = allocate(pools, pauseMillis);
            }
            builds[r] = build(layout, budget, pauseMillis);
            touches[r] = firstTouch(budget, pauseMillis);
            if (!allocFirst) {
                allocs[r] = allocate(pools, pauseMillis);
            }
            System.out.printf("%d%s | %.3f | %d | %d | %.3f | %d | %.3f | %d%n", r + 1,
                    allocFirst ? " (allocation first)" : " (allocation last)", builds[r].nanos / 1e9,
                    builds[r].growthBytes / MIB, builds[r].rssBytes / MIB, touches[r].nanos / 1e9,
                    touches[r].growthBytes / MIB, allocs[r].nanos / 1e9, allocs[r].growthBytes / MIB);
        }
        double b = median(builds, Phase::nanos) / 1e9;
        double t = median(touches, Phase::nanos) / 1e9;
        double a = median(allocs, Phase::nanos) / 1e9;
        System.out.printf("median: build %.3f s, first touch of the pools %.3f s, zero-filled allocation %.3f s;"
                + " build / allocation %.3f (target <= 1.2), first touch / allocation %.2f%n", b, t, a, b / a, t / a);
        System.out.printf("median RSS: growth in build %d MiB = %.3fx the budgets (%d MiB), after build %d MiB = %.2fx;"
                + " growth in the first touch %d MiB = %.2fx; in the allocation %d MiB = %.2fx%n",
                median(builds, Phase::growthBytes) / MIB, (double) median(builds, Phase::growthBytes) / pools,
                pools / MIB, median(builds, Phase::rssBytes) / MIB, (double) median(builds, Phase::rssBytes) / pools,
                median(touches, Phase::growthBytes) / MIB, (double) median(touches, Phase::growthBytes) / pools,
                median(allocs, Phase::growthBytes) / MIB, (double) median(allocs, Phase::growthBytes) / pools);
    }

    /** Pauses, collects, and returns the RSS to start a phase from. */
    private static long settle(long pauseMillis) throws InterruptedException {
        Thread.sleep(pauseMillis);
        System.gc();
        return rssBytes();
    }

    /** The limit: one zero-filled allocation of {@code bytes}. */
    private static Phase allocate(long bytes, long pauseMillis) throws InterruptedException {
        long rss = settle(pauseMillis);
        long start = System.nanoTime();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment pool = arena.allocate(bytes, 4096); // the JDK zero-fills: every page written once
            long nanos = System.nanoTime() - start;
            long after = rssBytes();
            if (pool.byteSize() != bytes) {
                throw new IllegalStateException("allocated " + pool.byteSize() + " bytes, asked " + bytes);
            }
            return new Phase(nanos, after - rss, after);
        }
    }

    /** build() of a manager with both budgets, timed alone. */
    private static Phase build(KvLayout layout, long budget, long pauseMillis) throws InterruptedException {
        try (EmulatedDevice device = new EmulatedDevice(budget)) {
            long rss = settle(pauseMillis);
            long start = System.nanoTime();
            try (KvBlockManager kv = KvBlockManager.builder(layout).device(device, budget).host(budget)
                    .recentDeviceBlocks(0).movers(0).build()) {
                long nanos = System.nanoTime() - start;
                long after = rssBytes(); // kv is open: its pools are held
                return new Phase(nanos, after - rss, after);
            }
        }
    }

    /** The pools as build() allocates them, and one write per base page of each. */
    private static Phase firstTouch(long budget, long pauseMillis) throws InterruptedException {
        try (EmulatedDevice device = new EmulatedDevice(budget)) {
            long rss = settle(pauseMillis);
            long start = System.nanoTime();
            try (DeviceBuffer deviceSlots = device.allocateDevice(budget);
                    PinnedHostBuffer hostSlots = device.allocatePinnedHost(budget)) {
                touch(deviceSlots.hostView().orElseThrow());
                touch(hostSlots.segment());
                long nanos = System.nanoTime() - start;
                long after = rssBytes();
                return new Phase(nanos, after - rss, after);
            }
        }
    }

    private static void touch(MemorySegment pool) {
        for (long offset = 0; offset < pool.byteSize(); offset += 4096) {
            pool.set(ValueLayout.JAVA_BYTE, offset, (byte) 1);
        }
    }

    /** {@return VmRSS of /proc/self/status, in bytes} */
    static long rssBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) << 10;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }

    private static long median(Phase[] phases, ToLongFunction<Phase> field) {
        long[] sorted = Arrays.stream(phases).mapToLong(field).sorted().toArray();
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static long positive(String[] args, int index, String name, long fallback) {
        if (args.length <= index) {
            return fallback;
        }
        try {
            long v = Long.parseLong(args[index]);
            if (v >= 1) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(name + ": '" + args[index] + "' (expected a positive integer)");
    }
}
