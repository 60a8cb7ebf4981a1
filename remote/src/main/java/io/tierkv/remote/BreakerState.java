package io.tierkv.remote;

/** The state of a {@link RemoteStore}'s circuit breaker. */
public enum BreakerState {
    /** Calls go to the server. */
    CLOSED,
    /** Calls are refused without touching the network: reads miss, writes are dropped. */
    OPEN,
    /** The back-off has passed and one probe call is on its way; the others are refused. */
    HALF_OPEN
}
