package io.tierkv.bench.cli;

import io.tierkv.core.KvLayout;
import io.tierkv.core.policy.EvictionPolicies;
import io.tierkv.tiers.disk.Compression;
import java.nio.file.Path;

/**
 * Everything a replay needs besides its requests. Validated on construction; an invalid
 * instance cannot exist.
 *
 * <h2>Tiers</h2>
 * With {@code hostBytes > 0} (or a disk tier) the replay runs a {@link io.tierkv.tiers.KvBlockManager}:
 * device tier (emulated device memory), pinned host tier, optional disk tier. With
 * {@code hostBytes == 0} and no disk it runs the manager's block model alone
 * ({@link io.tierkv.core.cache.PagedKvCache} with no lower tier): a single-tier prefix cache whose
 * policy drops blocks instead of demoting them, which is what a "single-tier LRU store" means.
 *
 * @param layout                block layout; its block size must divide the trace's
 * @param deviceBytes           device tier budget, at least one block (more than {@code recentBlocks})
 * @param hostBytes             pinned host tier budget: 0 for none (single tier when there is no disk; with a
 *                              disk tier the manager gets a host tier of one block, its minimum), else at
 *                              least one block
 * @param diskDir               disk tier directory, or null for a temporary one when {@code diskBytes > 0}
 * @param diskBytes             disk tier budget: 0 for no disk tier
 * @param compression           disk record compression
 * @param policy                eviction policy name (see {@link EvictionPolicies#names()})
 * @param recentBlocks          sealed blocks at the end of the open sequence kept on the device
 * @param movers                background mover threads of the manager (0: the mover's cycle runs on the
 *                              replay thread after every request, which makes a replay deterministic)
 * @param payload               whether block bytes are written and verified
 * @param maxDecodeTokens       cap on the answer tokens appended per request; -1 for none
 * @param speed                 0 to replay as fast as possible, else the factor by which the trace's
 *                              timestamps are compressed (1 = real time, 10 = ten times faster)
 * @param admissionTimeoutNanos how long a block allocation waits for space before the request is
 *                              rejected
 * @param remote                a remote store below the manager's lowest local tier
 *                              ({@code KvBlockManagerBuilder.remote}), or null for none; needs a tiered
 *                              configuration
 */
public record ReplayConfig(KvLayout layout, long deviceBytes, long hostBytes, Path diskDir, long diskBytes,
        Compression compression, String policy, int recentBlocks, int movers, Payload payload, int maxDecodeTokens,
        double speed, long admissionTimeoutNanos, io.tierkv.remote.RemoteOptions remote) {

    /** Payload modes. */
    public enum Payload {
        /** Every block's bytes are written, derived from its id, and every matched block is read back and verified. */
        FULL,
        /**
         * Blocks are written with zero bytes and never verified: the manager still allocates,
         * seals, hashes, moves and evicts every block (for fast capacity sweeps; use a tiny layout).
         */
        NONE
    }

    /**
     * Validates.
     *
     * @throws IllegalArgumentException naming the field, its value and the bound
     */
    public ReplayConfig {
        if (layout == null) {
            throw new IllegalArgumentException("layout: null");
        }
        long block = layout.bytesPerBlock();
        if (deviceBytes / block <= recentBlocks || deviceBytes < block) {
            throw new IllegalArgumentException("deviceBytes: " + deviceBytes + " (expected >= " + (recentBlocks + 1)
                    + " blocks of " + block + " bytes: recentBlocks + 1)");
        }
        if (hostBytes != 0 && hostBytes < block) {
            throw new IllegalArgumentException("hostBytes: " + hostBytes + " (expected 0 or >= bytesPerBlock " + block
                    + ")");
        }
        if (diskBytes < 0) {
            throw new IllegalArgumentException("diskBytes: " + diskBytes + " (expected >= 0)");
        }
        if (diskBytes > 0 && diskBytes < Math.max(block, 4096)) {
            throw new IllegalArgumentException("diskBytes: " + diskBytes + " (expected 0 or >= "
                    + Math.max(block, 4096) + ")");
        }
        if (compression == null) {
            throw new IllegalArgumentException("compression: null (expected NONE or LZ4)");
        }
        if (policy == null || !EvictionPolicies.names().contains(policy)) {
            throw new IllegalArgumentException("policy: '" + policy + "' (expected one of " + EvictionPolicies.names()
                    + ")");
        }
        if (recentBlocks < 0) {
            throw new IllegalArgumentException("recentBlocks: " + recentBlocks + " (expected >= 0)");
        }
        if (movers < 0 || movers > 8) {
            throw new IllegalArgumentException("movers: " + movers + " (expected 0..8)");
        }
        if (payload == null) {
            throw new IllegalArgumentException("payload: null (expected FULL or NONE)");
        }
        if (maxDecodeTokens < -1) {
            throw new IllegalArgumentException("maxDecodeTokens: " + maxDecodeTokens + " (expected -1 or >= 0)");
        }
        if (!(speed >= 0) || Double.isInfinite(speed)) {
            throw new IllegalArgumentException("speed: " + speed + " (expected >= 0, 0 for as fast as possible)");
        }
        if (admissionTimeoutNanos < 0) {
            throw new IllegalArgumentException("admissionTimeoutNanos: " + admissionTimeoutNanos + " (expected >= 0)");
        }
        if (remote != null && hostBytes == 0 && diskBytes == 0) {
            throw new IllegalArgumentException("remote: " + remote.url() + " with hostBytes 0 and diskBytes 0 "
                    + "(expected a host or disk tier: the store lies below the lowest local tier)");
        }
    }

    /**
     * A single-tier, deterministic configuration: device only, LRU, no movers, no payload, no
     * decode, no pacing, no admission wait.
     *
     * @param layout       the layout
     * @param deviceBlocks device capacity in blocks
     * @return the configuration
     */
    public static ReplayConfig singleTier(KvLayout layout, long deviceBlocks) {
        return new ReplayConfig(layout, deviceBlocks * layout.bytesPerBlock(), 0, null, 0, Compression.LZ4, "lru", 0,
                0, Payload.NONE, 0, 0, 0, null);
    }

    /**
     * Whether this configuration runs the tier manager (a host tier or a disk tier below the
     * device) rather than the single-tier block model.
     *
     * @return true for the tier manager
     */
    public boolean tiered() {
        return hostBytes > 0 || diskBytes > 0;
    }

    /**
     * Device capacity in blocks.
     *
     * @return deviceBytes / bytesPerBlock
     */
    public long deviceBlocks() {
        return deviceBytes / layout.bytesPerBlock();
    }

    /**
     * A copy with another device budget.
     *
     * @param bytes device bytes
     * @return the copy
     */
    public ReplayConfig withDeviceBytes(long bytes) {
        return new ReplayConfig(layout, bytes, hostBytes, diskDir, diskBytes, compression, policy, recentBlocks, movers,
                payload, maxDecodeTokens, speed, admissionTimeoutNanos, remote);
    }
}
