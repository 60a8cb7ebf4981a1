package io.tierkv.core.cache;

import java.lang.foreign.MemorySegment;

/** Argument checks whose messages name the field, the value and the bound. */
final class Checks {

    private Checks() {
    }

    /**
     * Checks an index.
     *
     * @throws IndexOutOfBoundsException {@code field: value (expected 0 <= field < boundName bound)}
     *                                   unless {@code 0 <= value < bound}
     */
    static void index(String field, int value, int bound, String boundName) {
        if (value < 0 || value >= bound) {
            throw new IndexOutOfBoundsException(field + ": " + value + " (expected 0 <= " + field + " < " + boundName
                    + bound + ")");
        }
    }

    /**
     * Checks a segment to be written into.
     *
     * @throws IllegalArgumentException {@code field: N bytes[, read-only] (expected writable and >= boundName bound)}
     *                                  if it is read-only or shorter than {@code bound}
     */
    static void writable(String field, MemorySegment segment, int bound, String boundName) {
        if (segment.isReadOnly() || segment.byteSize() < bound) {
            throw new IllegalArgumentException(field + ": " + segment.byteSize() + " bytes" + (segment.isReadOnly() ? ", read-only" : "")
                    + " (expected writable and >= " + boundName + " " + bound + ")");
        }
    }

    /**
     * Checks a length.
     *
     * @throws IllegalArgumentException {@code field: value (expected >= boundName bound)} if {@code value < bound}
     */
    static void atLeast(String field, long value, int bound, String boundName) {
        if (value < bound) {
            throw new IllegalArgumentException(field + ": " + value + " (expected >= " + boundName + " " + bound + ")");
        }
    }
}
