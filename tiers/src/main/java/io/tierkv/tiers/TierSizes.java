package io.tierkv.tiers;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.tiers.disk.DiskOptions;

/**
 * What a {@link KvBlockManager} commits at build, from its budgets: the slots of each tier, the
 * block ids, the staging buffers, and the bytes they take. Computed once by the builder, checked
 * against the machine ({@link MachineFit}) and then allocated by the constructor, so the check and
 * the allocation cannot disagree.
 *
 * @param layout         the block layout
 * @param deviceBytes    the device budget as given ({@code device.budgetBytes})
 * @param hostBytes      the host budget as given ({@code host.budgetBytes})
 * @param deviceBlocks   device slots: whole blocks of the device budget
 * @param hostBlocks     host slots: whole blocks of the host budget
 * @param maxBlocks      block ids: device + host slots + the records the disk budget holds (+1),
 *                       the disk share at most 2^22, the sum at most 2^30 - 1
 * @param transferBytes  the transfer budget charged to a pool: whole blocks of the transfer budget
 *                       (one block by default)
 * @param stagingBuffers transfer staging buffers allocated: one block each, at most 64
 */
record TierSizes(KvLayout layout, long deviceBytes, long hostBytes, long deviceBlocks, long hostBlocks,
        long maxBlocks, long transferBytes, int stagingBuffers) {

    /** Most staging buffers: a transfer budget beyond 64 blocks bounds read-ahead, not memory. */
    static final int MAX_STAGING_BUFFERS = 64;
    /** Most slots per tier: block ids and slots are ints, with room for the sum of the tiers. */
    static final long MAX_SLOTS = Integer.MAX_VALUE / 4;

    /**
     * Computes the sizes of a validated builder's budgets.
     *
     * @param layout        the block layout
     * @param deviceBytes   device budget, at least one block
     * @param hostBytes     host budget, at least one block
     * @param transferBytes transfer budget, at least one block, or {@link KvBlockManagerBuilder#UNSET} for the default (one block)
     * @param disk          the disk tier's options, or null without one
     * @return the sizes
     */
    static TierSizes of(KvLayout layout, long deviceBytes, long hostBytes, long transferBytes, DiskOptions disk) {
        long blockBytes = layout.bytesPerBlock();
        long deviceBlocks = deviceBytes / blockBytes;
        long hostBlocks = hostBytes / blockBytes;
        long diskBlocks = disk == null ? 0 : Math.min(1 << 22, disk.budgetBytes() / blockBytes + 1);
        long maxBlocks = Math.min(Integer.MAX_VALUE / 2, deviceBlocks + hostBlocks + diskBlocks);
        long transfer = transferBytes == KvBlockManagerBuilder.UNSET ? blockBytes : transferBytes;
        int staging = (int) Math.min(MAX_STAGING_BUFFERS, transfer / blockBytes);
        return new TierSizes(layout, deviceBytes, hostBytes, deviceBlocks, hostBlocks, maxBlocks,
                transfer / blockBytes * blockBytes, staging);
    }

    /**
     * Refuses a tier of more slots than block ids can address ({@link #MAX_SLOTS}).
     *
     * @throws IllegalArgumentException naming the budget, its value and the bound
     */
    void checkSlots() {
        long bound = MAX_SLOTS * layout.bytesPerBlock();
        if (deviceBlocks > MAX_SLOTS) {
            throw new IllegalArgumentException("device.budgetBytes: " + deviceBytes + " (expected <= " + MAX_SLOTS
                    + " blocks x bytesPerBlock " + layout.bytesPerBlock() + " = " + bound + ")");
        }
        if (hostBlocks > MAX_SLOTS) {
            throw new IllegalArgumentException("host.budgetBytes: " + hostBytes + " (expected <= " + MAX_SLOTS
                    + " blocks x bytesPerBlock " + layout.bytesPerBlock() + " = " + bound + ")");
        }
    }

    /** {@return bytes of one block} */
    long blockBytes() {
        return layout.bytesPerBlock();
    }

    /** {@return block ids beyond the device and host slots: the disk tier's share of maxBlocks} */
    long diskBlocks() {
        return Math.max(0, maxBlocks - deviceBlocks - hostBlocks);
    }

    /** {@return device slot bytes: what the device tier allocates from its runtime} */
    long deviceSlotBytes() {
        return deviceBlocks * blockBytes();
    }

    /** {@return host slot bytes: the pinned host buffer} */
    long hostSlotBytes() {
        return hostBlocks * blockBytes();
    }

    /** {@return staging buffer bytes (host memory)} */
    long stagingBytes() {
        return (long) stagingBuffers * blockBytes();
    }

    /**
     * Native host memory the block metadata takes: the cache's per-id identities and written bits
     * ({@link PagedKvCache#metadataBytes}). The host tier keeps no identity of its own: it reads the
     * cache's record of each id it holds.
     *
     * @return bytes
     */
    long metadataBytes() {
        return PagedKvCache.metadataBytes(layout, maxBlocks);
    }
}
