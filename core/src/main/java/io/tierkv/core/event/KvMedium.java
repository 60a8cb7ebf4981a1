package io.tierkv.core.event;

/**
 * The tier a KV event names, spelled as vLLM's {@code medium} field spells it on the wire: the
 * string is {@link #name()}.
 *
 * <p>Immutable and thread-safe.
 */
public enum KvMedium {
    /** The device tier (device slots, attention reads here). */
    GPU,
    /** The pinned-host tier. */
    CPU,
    /** The disk tier (records in segment files, possibly recovered after a restart). */
    DISK,
    /** A remote store below disk (Valkey/Redis). */
    REMOTE
}
