package io.tierkv.jlama;

/**
 * Where the cached blocks of one generation's prompt came from.
 *
 * @param device blocks found on the device tier
 * @param host   blocks promoted from the host tier
 * @param disk   blocks loaded from the disk tier (including records recovered after a restart)
 */
public record PrefixHits(long device, long host, long disk) {

    /** No cached block. */
    public static final PrefixHits NONE = new PrefixHits(0, 0, 0);

    /** {@return all cached blocks} */
    public long total() {
        return device + host + disk;
    }

    /**
     * Adds another generation's hits.
     *
     * @param other the other hits
     * @return the sums
     */
    public PrefixHits plus(PrefixHits other) {
        return new PrefixHits(device + other.device, host + other.host, disk + other.disk);
    }
}
