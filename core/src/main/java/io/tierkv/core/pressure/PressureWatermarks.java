package io.tierkv.core.pressure;

/**
 * Utilisation marks at which each {@link PressureMode} begins, and the hysteresis by which
 * utilisation must fall below a mark before its mode is left.
 *
 * @param normal     enter NORMAL at or above this utilisation (default 0.70)
 * @param pressure   enter PRESSURE (default 0.85)
 * @param critical   enter CRITICAL (default 0.92)
 * @param emergency  enter EMERGENCY (default 0.96)
 * @param hysteresis leave a mode only below its mark minus this (default 0.03)
 */
public record PressureWatermarks(double normal, double pressure, double critical, double emergency,
        double hysteresis) {

    /**
     * Validates: {@code 0 < normal < pressure < critical < emergency <= 1} and
     * {@code 0 <= hysteresis < normal}.
     *
     * @throws IllegalArgumentException naming the field, its value and the bound
     */
    public PressureWatermarks {
        check("normal", normal, 0, pressure);
        check("pressure", pressure, normal, critical);
        check("critical", critical, pressure, emergency);
        if (!(emergency > critical && emergency <= 1.0)) {
            throw new IllegalArgumentException("emergency: " + emergency + " (expected critical " + critical
                    + " < emergency <= 1.0)");
        }
        if (!(hysteresis >= 0 && hysteresis < normal)) {
            throw new IllegalArgumentException("hysteresis: " + hysteresis + " (expected 0 <= hysteresis < normal "
                    + normal + ")");
        }
    }

    /** {@return the defaults of DESIGN.md: 0.70, 0.85, 0.92, 0.96, hysteresis 0.03} */
    public static PressureWatermarks defaults() {
        return new PressureWatermarks(0.70, 0.85, 0.92, 0.96, 0.03);
    }

    /**
     * Returns the utilisation at which a mode begins.
     *
     * @param mode a mode other than RELAXED
     * @return the utilisation at which it begins
     */
    public double enter(PressureMode mode) {
        return switch (mode) {
            case RELAXED -> 0;
            case NORMAL -> normal;
            case PRESSURE -> pressure;
            case CRITICAL -> critical;
            case EMERGENCY -> emergency;
        };
    }

    private static void check(String field, double value, double above, double below) {
        if (!(value > above && value < below)) {
            throw new IllegalArgumentException(field + ": " + value + " (expected " + above + " < " + field + " < "
                    + below + ")");
        }
    }
}
