package io.tierkv.bench.jmh;

/**
 * Heap in use once the collector has settled, for the footprint measurements
 * ({@link MetadataFootprint}, {@link DiskRecordFootprint}).
 *
 * <p>Thread-safe; the measuring thread should be the only one allocating.
 */
final class HeapProbe {

    private HeapProbe() {
    }

    /**
     * Runs full collections (at least four, at most ten, 50 ms apart) until two readings of
     * {@code totalMemory - freeMemory} differ by less than 1 KiB.
     *
     * @return the heap in use, in bytes
     */
    static long settledUsedBytes() {
        Runtime rt = Runtime.getRuntime();
        long last = Long.MAX_VALUE;
        for (int i = 0; i < 10; i++) {
            System.gc();
            long used = rt.totalMemory() - rt.freeMemory();
            if (i >= 3 && Math.abs(last - used) < 1024) {
                return used;
            }
            last = used;
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return used;
            }
        }
        return last;
    }
}
