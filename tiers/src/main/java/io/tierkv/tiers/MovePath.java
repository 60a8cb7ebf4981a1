package io.tierkv.tiers;

/** A direction the background mover moves blocks in; each has its own bounded queue. */
public enum MovePath {
    /** Demotions the pressure mode asks for. */
    DEVICE_TO_HOST,
    /** Read-ahead promotions of blocks held on the host. */
    HOST_TO_DEVICE,
    /** Spills that keep the host tier under its PRESSURE mark. */
    HOST_TO_DISK,
    /** Read-ahead of blocks held only on disk, into host slots (then host to device). */
    DISK_TO_HOST
}
