package io.tierkv.bench.cli;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Checks of command-line options, run before a command does any work. Each failure is an
 * {@link IllegalArgumentException} whose message names the option as typed, the value and the
 * bound, for example {@code --parallel 600 (expected 1 <= N <= 512: the model's vocabulary)};
 * {@link TierKvCli} prints it on one line and exits with status 2.
 */
final class Check {

    private Check() {
    }

    /**
     * Requires {@code value >= min}.
     *
     * @param option the option as typed, for example {@code --requests}
     * @param value  its value
     * @param min    the least value allowed
     * @return the value
     * @throws IllegalArgumentException if it is smaller
     */
    static long atLeast(String option, long value, long min) {
        if (value < min) {
            throw new IllegalArgumentException(option + " " + value + " (expected >= " + min + ")");
        }
        return value;
    }

    /**
     * Requires {@code min <= value <= max}.
     *
     * @param option the option as typed
     * @param value  its value
     * @param min    the least value allowed
     * @param max    the greatest value allowed
     * @param why    what the upper bound is, or an empty string
     * @return the value
     * @throws IllegalArgumentException if it is outside
     */
    static long between(String option, long value, long min, long max, String why) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(option + " " + value + " (expected " + min + " <= N <= " + max
                    + (why.isEmpty() ? "" : ": " + why) + ")");
        }
        return value;
    }

    /**
     * Requires {@code min <= value <= max} for a real number; NaN fails.
     *
     * @param option the option as typed
     * @param value  its value
     * @param min    the least value allowed
     * @param max    the greatest value allowed
     * @return the value
     * @throws IllegalArgumentException if it is outside or NaN
     */
    static double between(String option, double value, double min, double max) {
        if (!(value >= min && value <= max)) {
            throw new IllegalArgumentException(option + " " + text(value) + " (expected "
                    + (max == Double.MAX_VALUE ? ">= " + text(min) : text(min) + " <= X <= " + text(max)) + ")");
        }
        return value;
    }

    /** A double as typed: {@code 2} rather than {@code 2.0}. */
    private static String text(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
    }

    /**
     * Parses a count ({@code 1e6}, {@code 250000}) through {@link Sizes#parseCount}, naming the option.
     *
     * @param option the option as typed
     * @param text   the value as typed
     * @param min    the least count allowed
     * @return the count
     * @throws IllegalArgumentException if the text is not a count or is below {@code min}
     */
    static long count(String option, String text, long min) {
        long v;
        try {
            v = Sizes.parseCount(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + " " + text + " (" + e.getMessage().replace(">= 0", ">= " + min)
                    + ")");
        }
        if (v < min) {
            throw new IllegalArgumentException(option + " " + text + " (expected >= " + min + ")");
        }
        return v;
    }

    /**
     * Parses a byte size ({@code 512m}, {@code 1GiB}) through {@link Sizes#parseBytes}, naming the option.
     *
     * @param option the option as typed
     * @param text   the value as typed
     * @return bytes, {@code >= 0}
     * @throws IllegalArgumentException if the text is not a size
     */
    static long bytes(String option, String text) {
        try {
            return Sizes.parseBytes(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + " " + text + " (" + e.getMessage() + ")");
        }
    }

    /**
     * Requires a readable regular file.
     *
     * @param option the option as typed
     * @param file   the file
     * @param what   what the file is, for the message
     * @return the file
     * @throws IllegalArgumentException if it is missing, a directory or unreadable
     */
    static Path inputFile(String option, Path file, String what) {
        if (!Files.exists(file)) {
            throw new IllegalArgumentException(option + " " + file + ": not found (expected " + what + ")");
        }
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw new IllegalArgumentException(option + " " + file + ": not a readable file (expected " + what + ")");
        }
        return file;
    }

    /**
     * Requires that a file can be written later: its directory exists and is writable, and the file
     * itself, if it exists, is a writable regular file. Nothing is created.
     *
     * @param option the option as typed
     * @param file   the file
     * @return the file
     * @throws IllegalArgumentException if it cannot be written
     */
    static Path outputFile(String option, Path file) {
        Path abs = file.toAbsolutePath();
        Path parent = abs.getParent();
        if (Files.isDirectory(abs)) {
            throw new IllegalArgumentException(option + " " + file + ": is a directory (expected a file to write)");
        }
        if (parent != null && Files.exists(parent) && !Files.isDirectory(parent)) {
            throw new IllegalArgumentException(option + " " + file + ": " + parent
                    + " is not a directory (expected a file in an existing directory)");
        }
        if (parent == null || !Files.isDirectory(parent)) {
            throw new IllegalArgumentException(option + " " + file + ": directory " + parent
                    + " does not exist (expected a file in an existing directory)");
        }
        if (Files.exists(abs) ? !Files.isWritable(abs) : !Files.isWritable(parent)) {
            throw new IllegalArgumentException(option + " " + file + ": not writable");
        }
        return file;
    }

    /**
     * Requires that a directory can be used for files written later: it is a writable directory,
     * or it does not exist and its nearest existing ancestor is a writable directory (where it can
     * be created). Nothing is created.
     *
     * @param option the option as typed, for example {@code --disk-dir}
     * @param dir    the directory
     * @return the directory itself if it exists, else its nearest existing ancestor (the file system
     *         its files will be written to)
     * @throws IllegalArgumentException if it is a file, under a file, or not writable
     */
    static Path outputDirectory(String option, Path dir) {
        Path p = dir.toAbsolutePath();
        while (p != null && !Files.exists(p)) {
            p = p.getParent();
        }
        if (p == null) {
            return Path.of("").toAbsolutePath();
        }
        if (!Files.isDirectory(p)) {
            throw new IllegalArgumentException(option + " " + dir + ": " + p + " is not a directory (expected a "
                    + "directory, or a new one under a directory)");
        }
        if (!Files.isWritable(p)) {
            throw new IllegalArgumentException(option + " " + dir + ": " + p + " is not writable (expected a "
                    + "directory this user can write in)");
        }
        return p;
    }
}
