package io.tierkv.core.pressure;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.EnumMap;
import java.util.Map;

/**
 * Turns utilisation readings into a {@link PressureMode} with hysteresis: a mode is entered when
 * utilisation reaches its mark and left only when utilisation falls below the mark minus the
 * hysteresis, so readings that hover at a mark do not flap. Keeps the time spent in each mode and
 * counts transitions. Thread-safe (synchronized; called by the mover a few times per second).
 */
public final class PressureMonitor {

    private final PressureWatermarks marks;
    /** The modes in order, kept once: {@code values()} allocates a fresh array on every call. */
    private static final PressureMode[] MODES = PressureMode.values();

    @GuardedBy("this") private final long[] nanosIn = new long[MODES.length];
    @GuardedBy("this") private PressureMode mode = PressureMode.RELAXED;
    @GuardedBy("this") private long since;
    @GuardedBy("this") private long transitions;

    /**
     * Creates a monitor in RELAXED mode.
     *
     * @param marks     the watermarks
     * @param nowNanos  the current {@link System#nanoTime()}
     */
    public PressureMonitor(PressureWatermarks marks, long nowNanos) {
        this.marks = marks;
        this.since = nowNanos;
    }

    /**
     * Reads a utilisation and returns the mode in force after it.
     *
     * @param utilisation used / capacity, in [0, 1]
     * @param nowNanos    the current {@link System#nanoTime()}
     * @return the mode
     * @throws IllegalArgumentException if utilisation is outside [0, 1] or NaN
     */
    public synchronized PressureMode update(double utilisation, long nowNanos) {
        if (!(utilisation >= 0 && utilisation <= 1)) {
            throw new IllegalArgumentException("utilisation: " + utilisation + " (expected 0 <= utilisation <= 1)");
        }
        PressureMode next = mode;
        PressureMode[] all = MODES;
        while (next.ordinal() < all.length - 1 && utilisation >= marks.enter(all[next.ordinal() + 1])) {
            next = all[next.ordinal() + 1];
        }
        while (next != PressureMode.RELAXED && utilisation < marks.enter(next) - marks.hysteresis()) {
            next = all[next.ordinal() - 1];
        }
        if (next != mode) {
            nanosIn[mode.ordinal()] += nowNanos - since;
            since = nowNanos;
            mode = next;
            transitions++;
        }
        return mode;
    }

    /** {@return the mode in force} */
    public synchronized PressureMode mode() {
        return mode;
    }

    /** {@return mode changes so far} */
    public synchronized long transitions() {
        return transitions;
    }

    /**
     * Returns the time spent in each mode so far.
     *
     * @param nowNanos the current {@link System#nanoTime()}
     * @return nanoseconds spent in each mode so far, the current one included
     */
    public synchronized Map<PressureMode, Long> nanosInMode(long nowNanos) {
        Map<PressureMode, Long> m = new EnumMap<>(PressureMode.class);
        for (PressureMode p : PressureMode.values()) {
            m.put(p, nanosIn[p.ordinal()] + (p == mode ? nowNanos - since : 0));
        }
        return m;
    }
}
