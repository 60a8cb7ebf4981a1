package io.tierkv.natives;

/**
 * Free and total memory of a device, in bytes ({@code hipMemGetInfo}, {@code cudaMemGetInfo}).
 *
 * @param freeBytes bytes not allocated by anyone, {@code 0 <= freeBytes <= totalBytes}
 * @param totalBytes the device's capacity, {@code >= 0}
 */
public record MemoryInfo(long freeBytes, long totalBytes) {

    /**
     * Validates the figures.
     *
     * @throws IllegalArgumentException if a figure is negative or free exceeds total
     */
    public MemoryInfo {
        if (totalBytes < 0) {
            throw new IllegalArgumentException("totalBytes: " + totalBytes + " (expected >= 0)");
        }
        if (freeBytes < 0 || freeBytes > totalBytes) {
            throw new IllegalArgumentException(
                    "freeBytes: " + freeBytes + " (expected 0 to totalBytes " + totalBytes + ")");
        }
    }

    /**
     * Bytes in use: {@code totalBytes - freeBytes}.
     *
     * @return used bytes
     */
    public long usedBytes() {
        return totalBytes - freeBytes;
    }
}
