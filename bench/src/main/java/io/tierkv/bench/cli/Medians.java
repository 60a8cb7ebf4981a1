package io.tierkv.bench.cli;

import java.util.Arrays;
import java.util.Locale;

/** Medians of repeated measurements, as the commands print them (this machine is shared: medians, not means). */
final class Medians {

    private Medians() {
    }

    /**
     * {@return the median: the middle value, or the mean of the two middle values of an even count}
     *
     * @param values the measurements, at least one; not modified
     * @throws IllegalArgumentException if values is empty
     */
    static double median(double[] values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("values: none (expected at least one)");
        }
        double[] s = values.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    /**
     * {@return "median (min m, max M)" of the values, three decimals}
     *
     * @param values the measurements, at least one
     * @throws IllegalArgumentException if values is empty
     */
    static String medianAndRange(double[] values) {
        double min = Arrays.stream(values).min().orElseThrow(() -> new IllegalArgumentException("values: none"));
        double max = Arrays.stream(values).max().getAsDouble();
        return String.format(Locale.ROOT, "%.3f (min %.3f, max %.3f)", median(values), min, max);
    }
}
