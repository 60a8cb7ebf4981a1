package io.tierkv.core.budget;

/** What a byte budget limits. */
public enum BudgetKind {
    /** Device (top-tier) block memory. */
    DEVICE,
    /** Pinned host block memory. */
    HOST,
    /** Staging buffers for transfers between tiers. */
    TRANSFER,
    /** Bytes on disk, every byte of every segment file. */
    DISK
}
