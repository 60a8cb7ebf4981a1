package io.tierkv.natives;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.zip.CRC32C;

/**
 * The device check run by {@code native/gpu-check.sh}: on the detected GPU (or the emulated device
 * with {@code --emulated}), allocates device and pinned memory, round-trips {@code --mib} MiB
 * (default 1024) host-to-device-to-host in blocks of {@code --block-kib} KiB (default 1024) with a
 * CRC32C per block, and prints host-to-device and device-to-host GB/s for pinned and pageable host
 * memory, per-block and as one whole copy. Timing uses device events around the queued copies;
 * each figure is the best of {@code --passes} passes (default 3) after one warm-up pass.
 *
 * <p>Output lines starting with {@code RESULT} are machine-readable:
 * {@code RESULT tierkv <h2d|d2h> <pinned|pageable> <block|whole> <GB/s>}. Exit status 0 when every
 * checksum matched, 1 on a mismatch, 2 when no GPU was found (reasons printed).
 */
public final class GpuCheck {

    private GpuCheck() {}

    /**
     * Runs the check.
     *
     * @param args {@code [--emulated] [--mib N] [--block-kib N] [--passes N]}
     */
    public static void main(String[] args) {
        System.exit(run(args));
    }

    /**
     * Runs the check and returns the exit status instead of exiting.
     *
     * @param args as for {@link #main(String[])}
     * @return 0 on success, 1 on a checksum mismatch, 2 without a GPU
     */
    public static int run(String[] args) {
        boolean emulated = false;
        long mib = 1024;
        long blockKib = 1024;
        int passes = 3;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--emulated" -> emulated = true;
                case "--mib" -> mib = Long.parseLong(args[++i]);
                case "--block-kib" -> blockKib = Long.parseLong(args[++i]);
                case "--passes" -> passes = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument: " + args[i]);
            }
        }
        long total = mib << 20;
        long block = blockKib << 10;
        if (total % block != 0) {
            throw new IllegalArgumentException("--mib " + mib + " is not a multiple of --block-kib " + blockKib);
        }
        GpuRuntime runtime;
        if (emulated) {
            runtime = new EmulatedDevice(total + (64L << 20));
        } else {
            GpuRuntimes.Probe probe = GpuRuntimes.probe(List.of(GpuRuntimes.Candidate.hip(), GpuRuntimes.Candidate.cuda()));
            if (probe.runtime().isEmpty()) {
                System.out.println("NO GPU: " + String.join("; ", probe.skipped()));
                return 2;
            }
            runtime = probe.runtime().get();
        }
        try (runtime) {
            System.out.printf(Locale.ROOT, "runtime %s, %d device(s), %s%n", runtime, runtime.deviceCount(),
                    runtime.memoryInfo());
            boolean ok = true;
            try (DeviceBuffer device = runtime.allocateDevice(total);
                    PinnedHostBuffer pinnedSrc = runtime.allocatePinnedHost(total);
                    PinnedHostBuffer pinnedDst = runtime.allocatePinnedHost(total);
                    Arena pageable = Arena.ofShared();
                    GpuStream stream = runtime.createStream()) {
                System.out.printf(Locale.ROOT, "pinned host: requested %d bytes, pinned %d bytes%n",
                        pinnedSrc.requestedBytes(), pinnedSrc.pinnedBytes());
                MemorySegment pageSrc = pageable.allocate(total, 4096);
                MemorySegment pageDst = pageable.allocate(total, 4096);
                fill(pinnedSrc.segment(), 0x9E3779B97F4A7C15L);
                fill(pageSrc, 0xD1B54A32D192ED03L);
                long[] pinnedCrc = blockCrcs(pinnedSrc.segment(), block);
                long[] pageCrc = blockCrcs(pageSrc, block);
                ok &= measure(stream, device, pinnedSrc.segment(), pinnedDst.segment(), pinnedCrc, block, passes, "pinned");
                ok &= measure(stream, device, pageSrc, pageDst, pageCrc, block, passes, "pageable");
            }
            System.out.println(ok ? "CHECKSUMS OK" : "CHECKSUM MISMATCH");
            return ok ? 0 : 1;
        }
    }

    private static boolean measure(GpuStream stream, DeviceBuffer device, MemorySegment src, MemorySegment dst,
            long[] crcs, long block, int passes, String kind) {
        long total = src.byteSize();
        double bestH2dBlock = 0;
        double bestD2hBlock = 0;
        double bestH2dWhole = 0;
        double bestD2hWhole = 0;
        boolean ok = true;
        for (int pass = 0; pass <= passes; pass++) { // pass 0 warms up
            dst.fill((byte) 0);
            double h2d = timed(stream, total, () -> {
                for (long off = 0; off < total; off += block) {
                    stream.copyHostToDevice(src.asSlice(off, block), device, off, block);
                }
            });
            double d2h = timed(stream, total, () -> {
                for (long off = 0; off < total; off += block) {
                    stream.copyDeviceToHost(device, off, dst.asSlice(off, block), block);
                }
            });
            List<Long> bad = mismatches(dst, crcs, block);
            if (!bad.isEmpty()) {
                System.out.printf(Locale.ROOT, "MISMATCH %s pass %d: %d of %d blocks differ, first at offset %d%n",
                        kind, pass, bad.size(), crcs.length, bad.getFirst() * block);
                ok = false;
            }
            double h2dWhole = timed(stream, total, () -> stream.copyHostToDevice(src, device, 0, total));
            dst.fill((byte) 0);
            double d2hWhole = timed(stream, total, () -> stream.copyDeviceToHost(device, 0, dst, total));
            if (!mismatches(dst, crcs, block).isEmpty()) {
                System.out.printf(Locale.ROOT, "MISMATCH %s whole copy pass %d%n", kind, pass);
                ok = false;
            }
            if (pass > 0) {
                bestH2dBlock = Math.max(bestH2dBlock, h2d);
                bestD2hBlock = Math.max(bestD2hBlock, d2h);
                bestH2dWhole = Math.max(bestH2dWhole, h2dWhole);
                bestD2hWhole = Math.max(bestD2hWhole, d2hWhole);
            }
        }
        System.out.printf(Locale.ROOT, "RESULT tierkv h2d %s block %.2f%n", kind, bestH2dBlock);
        System.out.printf(Locale.ROOT, "RESULT tierkv d2h %s block %.2f%n", kind, bestD2hBlock);
        System.out.printf(Locale.ROOT, "RESULT tierkv h2d %s whole %.2f%n", kind, bestH2dWhole);
        System.out.printf(Locale.ROOT, "RESULT tierkv d2h %s whole %.2f%n", kind, bestD2hWhole);
        return ok;
    }

    /** Queues the copies between two events and returns GB/s (1e9 bytes per second). */
    private static double timed(GpuStream stream, long bytes, Runnable copies) {
        try (GpuEvent start = stream.record()) {
            copies.run();
            try (GpuEvent end = stream.record()) {
                end.synchronize();
                float ms = end.elapsedMillisSince(start);
                return ms <= 0 ? Double.POSITIVE_INFINITY : bytes / (ms * 1e6);
            }
        }
    }

    private static void fill(MemorySegment s, long seed) {
        long x = seed;
        for (long off = 0; off + 8 <= s.byteSize(); off += 8) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, off, x);
        }
    }

    private static long[] blockCrcs(MemorySegment s, long block) {
        long[] out = new long[(int) (s.byteSize() / block)];
        for (int i = 0; i < out.length; i++) {
            out[i] = crc(s.asSlice(i * block, block));
        }
        return out;
    }

    private static List<Long> mismatches(MemorySegment s, long[] crcs, long block) {
        List<Long> bad = new ArrayList<>();
        for (int i = 0; i < crcs.length; i++) {
            if (crc(s.asSlice(i * block, block)) != crcs[i]) {
                bad.add((long) i);
            }
        }
        return bad;
    }

    private static long crc(MemorySegment s) {
        CRC32C crc = new CRC32C();
        ByteBuffer b = s.asByteBuffer();
        crc.update(b);
        return crc.getValue();
    }
}
