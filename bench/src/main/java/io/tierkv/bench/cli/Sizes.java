package io.tierkv.bench.cli;

import java.util.Locale;

/**
 * Parses and prints sizes on the command line: bytes with binary suffixes ({@code 4096},
 * {@code 512k}, {@code 64MiB}, {@code 1g}, {@code 1.5GiB}; {@code k/m/g/t} and {@code KiB/MiB/GiB/TiB}
 * are powers of 1024, {@code KB/MB/GB/TB} powers of 1000) and counts in plain or scientific
 * notation ({@code 1e6}, {@code 3e6}, {@code 250000}).
 */
public final class Sizes {

    private Sizes() {
    }

    /**
     * Parses a byte size.
     *
     * @param text for example {@code 512m} or {@code 1GiB}
     * @return bytes, {@code >= 0}
     * @throws IllegalArgumentException if the text is not a size or is negative or too large
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
        double value;
        try {
            value = Double.parseDouble(lower);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("size: '" + text + "' (expected bytes such as 4096, 512k, 64MiB, 1g)");
        }
        double bytes = value * unit;
        if (!(bytes >= 0) || bytes > Long.MAX_VALUE / 2) {
            throw new IllegalArgumentException("size: '" + text + "' (expected 0 <= bytes <= " + Long.MAX_VALUE / 2
                    + ")");
        }
        return Math.round(bytes);
    }

    /**
     * Parses a count such as a token capacity.
     *
     * @param text for example {@code 1e6} or {@code 250000}
     * @return the count, {@code >= 0}
     * @throws IllegalArgumentException if the text is not a non-negative number
     */
    public static long parseCount(String text) {
        double v;
        try {
            v = Double.parseDouble(text.trim().replace("_", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("count: '" + text + "' (expected a number such as 250000 or 1e6)");
        }
        if (!(v >= 0) || v > Long.MAX_VALUE / 2) {
            throw new IllegalArgumentException("count: '" + text + "' (expected >= 0)");
        }
        return Math.round(v);
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
