package io.tierkv.core.pressure;

/**
 * How hard the tier manager works to free the device, from utilisation against watermarks
 * (DESIGN.md, "Pressure modes").
 */
public enum PressureMode {
    /** Below the NORMAL mark: demote nothing proactively. */
    RELAXED,
    /** Demote sealed blocks idle longer than a threshold. */
    NORMAL,
    /** Demote by policy order until back under the PRESSURE mark. */
    PRESSURE,
    /** Demote every unprotected sealed block. */
    CRITICAL,
    /** Admission control: new blocks wait a bounded time for space, then fail. */
    EMERGENCY
}
