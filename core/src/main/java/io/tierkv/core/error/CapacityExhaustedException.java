package io.tierkv.core.error;

/**
 * A tier had no free slot and nothing evictable or demotable within the allowed wait.
 *
 * <p>Nothing already stored is lost when this is thrown.
 */
public final class CapacityExhaustedException extends TierKvException {

    private static final long serialVersionUID = 1L;

    private final String tier;
    private final long requestedBlocks;
    private final long availableBlocks;

    /**
     * Creates the exception.
     *
     * @param tier            name of the tier that ran out (for example {@code DEVICE})
     * @param requestedBlocks blocks the caller asked for
     * @param availableBlocks blocks that were free or reclaimable when it gave up
     * @param detail          extra words on why, or an empty string
     */
    public CapacityExhaustedException(String tier, long requestedBlocks, long availableBlocks, String detail) {
        super(tier + " capacity exhausted: requested " + requestedBlocks + " block(s), available "
                + availableBlocks + (detail.isEmpty() ? "" : " (" + detail + ")"), null);
        this.tier = tier;
        this.requestedBlocks = requestedBlocks;
        this.availableBlocks = availableBlocks;
    }

    /** {@return the tier that ran out} */
    public String tier() {
        return tier;
    }

    /** {@return blocks requested} */
    public long requestedBlocks() {
        return requestedBlocks;
    }

    /** {@return blocks free or reclaimable when the request failed} */
    public long availableBlocks() {
        return availableBlocks;
    }
}
