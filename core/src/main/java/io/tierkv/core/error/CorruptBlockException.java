package io.tierkv.core.error;

/**
 * A stored block failed verification (checksum, header, length). Its bytes were not handed out.
 */
public final class CorruptBlockException extends TierKvException {

    private static final long serialVersionUID = 1L;

    private final String where;
    private final long expectedChecksum;
    private final long actualChecksum;

    /**
     * Creates the exception.
     *
     * @param where            the record's location, for example {@code seg-3@81920}
     * @param reason           what did not verify
     * @param expectedChecksum checksum in the header, or -1
     * @param actualChecksum   checksum computed over the stored bytes, or -1
     */
    public CorruptBlockException(String where, String reason, long expectedChecksum, long actualChecksum) {
        super("corrupt block at " + where + ": " + reason
                + (expectedChecksum < 0 ? "" : " (crc32c expected " + Long.toHexString(expectedChecksum)
                        + ", actual " + Long.toHexString(actualChecksum) + ")"), null);
        this.where = where;
        this.expectedChecksum = expectedChecksum;
        this.actualChecksum = actualChecksum;
    }

    /** {@return where the record was} */
    public String where() {
        return where;
    }

    /** {@return the header's checksum, or -1} */
    public long expectedChecksum() {
        return expectedChecksum;
    }

    /** {@return the computed checksum, or -1} */
    public long actualChecksum() {
        return actualChecksum;
    }
}
