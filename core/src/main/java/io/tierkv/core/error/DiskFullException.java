package io.tierkv.core.error;

/**
 * The file system refused to reserve space for a disk segment ({@code posix_fallocate} failed
 * with {@code ENOSPC}), or usable space fell below what a segment needs.
 */
public final class DiskFullException extends TierKvException {

    private static final long serialVersionUID = 1L;

    private final long requestedBytes;
    private final long usableBytes;

    /**
     * Creates the exception.
     *
     * @param path           the file or directory that could not grow
     * @param requestedBytes bytes the reservation asked for
     * @param usableBytes    usable bytes the file system reported, or -1 if unknown
     */
    public DiskFullException(String path, long requestedBytes, long usableBytes) {
        super("disk full at " + path + ": requested " + requestedBytes + " B, usable "
                + (usableBytes < 0 ? "unknown" : usableBytes + " B"), null);
        this.requestedBytes = requestedBytes;
        this.usableBytes = usableBytes;
    }

    /** {@return bytes requested} */
    public long requestedBytes() {
        return requestedBytes;
    }

    /** {@return usable bytes reported, or -1 when unknown} */
    public long usableBytes() {
        return usableBytes;
    }
}
