package io.tierkv.core.cache;

/**
 * The cache's moves, one class each, in the order a block travels: {@link Demote} (top tier down),
 * {@link MoveBelow} (spill and load between the tiers below, when the cache starts them),
 * {@link Promote} (back up into a top-tier slot), {@link ReadSealed} (a copy out, from wherever
 * the block is), {@link SettleBelow} (what the tiers below let go of) and, with a remote store,
 * {@link FetchAhead} (up from it for a prefix match) and the offers to it of the blocks that leave
 * the lowest local tier, with {@link HostRoom}
 * choosing which host blocks leave for the moves that need a host slot. Each move
 * plans under the cache lock, marks the block TRANSIT, releases the lock for the copy, and takes
 * it back to commit: the new location on success, the source as it was on failure. README,
 * "Walking a block's path", follows one block through them.
 */
final class TierMoves {

    final Demote demote;
    final Promote promote;
    final MoveBelow below;
    final ReadSealed read;
    final SettleBelow settle;
    /** Room on the host tier for the moves that need a host slot; null without a lower tier. */
    final HostRoom hostRoom;
    /**
     * The store below the lowest local tier ({@link LowerTier#remoteRecords}), or null: offered
     * the blocks that leave ({@link HostRoom}, the disk's departures) or, with write-through, are
     * demoted ({@link Demote}); fetched from by prefix matches ({@link FetchAhead}).
     */
    final RemoteRecords remote;

    TierMoves(PagedKvCache cache, LowerTier lower) {
        this.demote = new Demote(cache, lower);
        this.promote = new Promote(cache, lower);
        this.below = new MoveBelow(cache, lower);
        this.read = new ReadSealed(cache, lower);
        this.settle = new SettleBelow(cache, lower);
        this.hostRoom = lower == null ? null : new HostRoom(cache, lower.hostSlots());
        this.remote = lower == null ? null : lower.remoteRecords();
        DiskRecords disk = lower == null ? null : lower.diskRecords();
        if (remote != null && disk != null) {
            disk.setDepartures(remote::offer); // the disk is the lowest local tier: what it evicts goes below
        }
    }
}
