package io.tierkv.bench.cli;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Parses and prints sizes on the command line: bytes with binary suffixes ({@code 4096},
 * {@code 512k}, {@code 64MiB}, {@code 1g}, {@code 1.5GiB}; {@code k/m/g/t} and {@code KiB/MiB/GiB/TiB}
 * are powers of 1024, {@code KB/MB/GB/TB} powers of 1000) and counts in plain or scientific
 * notation ({@code 1e6}, {@code 3e6}, {@code 250000}).
 */
public final class Sizes {

    private Sizes() {
    }

    /** The largest size or count accepted: half of {@code Long.MAX_VALUE}, so that sums of a few stay exact. */
    static final long MAX = Long.MAX_VALUE / 2;
    /** A decimal number with an optional fraction and exponent: no sign, no hex, no type suffix. */
    private static final Pattern DECIMAL = Pattern.compile("([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]+)?");

    /**
     * Parses a byte size.
     *
     * @param text for example {@code 512m} or {@code 1GiB}
     * @return bytes, {@code 0 <= bytes <= }{@link #MAX}
     * @throws IllegalArgumentException if the text is not a decimal size, is not a whole number of
     *                                  bytes or is too large; the message is what was expected
     *                                  (for example {@code expected a whole number of bytes; this is 0.7})
     */
    public static long parseBytes(String text) {
        String s = text.trim();
        String lower = s.toLowerCase(Locale.ROOT);
        long unit = 1;
        String[][] units = {
            {"kib", "1024"}, {"mib", "1048576"}, {"gib", "1073741824"}, {"tib", "1099511627776"},
            {"kb", "1000"}, {"mb", "1000000"}, {"gb", "1000000000"}, {"tb", "1000000000000"},
            {"k", "1024"}, {"m", "1048576"}, {"g", "1073741824"}, {"t", "1099511627776"}, {"b", "1"},
        };
        for (String[] u : units) {
            if (lower.endsWith(u[0]) && lower.length() > u[0].length()) {
                unit = Long.parseLong(u[1]);
                lower = lower.substring(0, lower.length() - u[0].length()).trim();
                break;
            }
        }
        if (!DECIMAL.matcher(lower).matches()) {
            throw new IllegalArgumentException("expected bytes >= 0 such as 4096, 512k, 64MiB, 1g");
        }
        return whole(Double.parseDouble(lower) * unit, "number of bytes");
    }

    /**
     * Parses a count such as a token capacity.
     *
     * @param text for example {@code 1e6} or {@code 250000} ({@code _} between digits allowed)
     * @return the count, {@code 0 <= count <= }{@link #MAX}
     * @throws IllegalArgumentException if the text is not a decimal number, is not whole or is too
     *                                  large; the message is what was expected
     */
    public static long parseCount(String text) {
        String s = text.trim().replace("_", "");
        if (!DECIMAL.matcher(s).matches()) {
            throw new IllegalArgumentException("expected a count >= 0 such as 250000 or 1e6");
        }
        return whole(Double.parseDouble(s), "count");
    }

    /** {@code value} as a long: refused when above {@link #MAX} or not whole, naming {@code what}. */
    private static long whole(double value, String what) {
        if (value > MAX) {
            throw new IllegalArgumentException("expected a " + what + " <= " + MAX);
        }
        if (value != Math.rint(value)) {
            throw new IllegalArgumentException("expected a whole " + what + "; this is " + BigDecimal.valueOf(value)
                    .stripTrailingZeros().toPlainString());
        }
        return (long) value;
    }

    /**
     * Prints bytes with a binary unit, for example {@code 1.50 GiB}.
     *
     * @param bytes a byte count
     * @return the text
     */
    public static String bytes(long bytes) {
        String[] u = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = bytes;
        int i = 0;
        while (Math.abs(v) >= 1024 && i < u.length - 1) {
            v /= 1024;
            i++;
        }
        return i == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.2f %s", v, u[i]);
    }
}
