package io.tierkv.bench.jmh;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * What {@link SpillLoadBenchmark}'s cold states measure with: the bytes this process has read from
 * storage ({@code /proc/self/io}), the resident page-cache bytes of files ({@code fincore}), the
 * storage reads of each measured call against the bytes it asked for, and a seeded random order
 * of blocks (random reads, so no call profits from another's read-ahead).
 *
 * <p>Thread-safety: the static methods may be called from any thread; a {@link RandomOrder} or
 * {@link DeviceReads} belongs to one state of one benchmark thread.
 */
final class PageCacheProbe {

    private PageCacheProbe() {
    }

    /**
     * Bytes this process has had read from storage ({@code read_bytes} of {@code /proc/self/io}):
     * page-cache misses, read-ahead included.
     *
     * @return bytes, or -1 where the file is missing
     */
    static long deviceReadBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/io"))) {
                if (line.startsWith("read_bytes:")) {
                    return Long.parseLong(line.substring(11).trim());
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return -1;
    }

    /**
     * Resident page-cache bytes of files as {@code fincore} (util-linux) reports them.
     *
     * @param files the files
     * @return the sum, or -1 if {@code fincore} is not installed or fails
     */
    static long residentBytes(List<Path> files) {
        if (files.isEmpty()) {
            return 0;
        }
        List<String> cmd = new ArrayList<>(List.of("fincore", "--bytes", "--noheadings", "--output", "RES"));
        files.forEach(f -> cmd.add(f.toString()));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            long sum = 0;
            for (String line : new String(p.getInputStream().readAllBytes()).trim().split("\\s+")) {
                sum += Long.parseLong(line);
            }
            return p.waitFor() == 0 ? sum : -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** A seeded random permutation of {@code [0, n)}, visited in turn (random reads). */
    static final class RandomOrder {
        private final int[] items;
        private int next;

        RandomOrder(int n) {
            items = new int[n];
            SplittableRandom r = new SplittableRandom(42);
            for (int i = 0; i < n; i++) {
                int j = r.nextInt(i + 1);
                items[i] = items[j];
                items[j] = i;
            }
        }

        /**
         * The next item of the permutation, starting over at the end.
         *
         * @return the item
         */
        int next() {
            int i = items[next];
            next = next + 1 == items.length ? 0 : next + 1;
            return i;
        }
    }

    /**
     * Counts the storage bytes read during each measured call against the bytes it asked for, and
     * prints the ratio at the end of the trial ({@code device ...} line).
     */
    static final class DeviceReads {
        private final String what;
        private long before;
        private long deviceBytes;
        private long askedBytes;
        private long calls;

        DeviceReads(String what) {
            this.what = what;
        }

        /** Just before a measured call. */
        void start() {
            before = deviceReadBytes();
        }

        /**
         * Just after a measured call.
         *
         * @param asked bytes the call asked for
         */
        void stop(long asked) {
            deviceBytes += deviceReadBytes() - before;
            askedBytes += asked;
            calls++;
        }

        /** Prints the totals. */
        void report() {
            System.out.printf("%ndevice %s: %d calls, %.1f MiB read from storage for %.1f MiB asked: %.3f per byte"
                    + "%n", what, calls, deviceBytes / 1048576.0, askedBytes / 1048576.0,
                    askedBytes == 0 ? 0.0 : (double) deviceBytes / askedBytes);
        }
    }
}
