package io.tierkv.natives.runtime;

import java.lang.foreign.MemorySegment;

/**
 * Argument checks shared by every {@code GpuStream} implementation, run before anything is queued.
 * Messages name the field, its value and the bound, for example
 * {@code "dstOffset + bytes: 4096 + 8192 = 12288 (expected <= dst.byteSize() 8192)"}.
 *
 * <p>Stateless and thread-safe.
 */
public final class CopyChecks {

    private CopyChecks() {}

    /**
     * Checks a copy length.
     *
     * @param bytes the length
     * @throws IllegalArgumentException if negative
     */
    public static void checkBytes(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes: " + bytes + " (expected >= 0)");
        }
    }

    /**
     * Checks that {@code [offset, offset + bytes)} lies within {@code [0, bound)}, without overflow.
     *
     * @param offsetField name of the offset, for example {@code "dstOffset"}
     * @param offset the offset
     * @param bytes the length, already checked non-negative
     * @param boundField name of the bound, for example {@code "dst.byteSize()"}
     * @param bound the size of the buffer
     * @throws IllegalArgumentException if the range is outside the buffer
     */
    public static void checkRange(String offsetField, long offset, long bytes, String boundField, long bound) {
        if (offset < 0) {
            throw new IllegalArgumentException(offsetField + ": " + offset + " (expected >= 0)");
        }
        if (offset > bound || bytes > bound - offset) {
            throw new IllegalArgumentException(offsetField + " + bytes: " + offset + " + " + bytes + " = "
                    + (offset + bytes) + " (expected <= " + boundField + " " + bound + ")");
        }
    }

    /**
     * Checks a host segment that a copy reads from or writes to.
     *
     * @param field {@code "src"} or {@code "dst"}
     * @param segment the segment
     * @param offset the copy's first byte in it; the error names it {@code field + "Offset"}
     * @param bytes the copy length, already checked non-negative
     * @param writable whether the copy writes into it
     * @throws IllegalArgumentException for a heap segment, a read-only segment that must be
     *     written, a negative offset, or {@code offset + bytes} past the segment's end
     * @throws IllegalStateException if the segment's arena is closed
     */
    public static void checkHostSegment(String field, MemorySegment segment, long offset, long bytes,
            boolean writable) {
        if (segment == null) {
            throw new NullPointerException(field);
        }
        if (!segment.isNative()) {
            throw new IllegalArgumentException(field + ": a heap segment (expected a native segment)");
        }
        if (!segment.scope().isAlive()) {
            throw new IllegalStateException(field + ": its arena is already closed");
        }
        if (writable && segment.isReadOnly()) {
            throw new IllegalArgumentException(field + ": a read-only segment (expected writable)");
        }
        long bound = segment.byteSize();
        if (offset < 0 || offset > bound || bytes > bound - offset) { // the names are built only to fail
            checkRange(field + "Offset", offset, bytes, field + ".byteSize()", bound);
        }
    }

    /**
     * Checks that two ranges of one buffer do not overlap (device-to-device copies within a buffer).
     *
     * @param srcOffset first source byte
     * @param dstOffset first destination byte
     * @param bytes the length
     * @throws IllegalArgumentException if the ranges overlap
     */
    public static void checkNoOverlap(long srcOffset, long dstOffset, long bytes) {
        if (bytes > 0 && srcOffset < dstOffset + bytes && dstOffset < srcOffset + bytes) {
            throw new IllegalArgumentException("srcOffset " + srcOffset + " and dstOffset " + dstOffset
                    + " overlap for bytes " + bytes + " in one buffer (expected disjoint ranges)");
        }
    }

    /**
     * Checks an allocation size.
     *
     * @param bytes the size
     * @throws IllegalArgumentException if {@code bytes <= 0}
     */
    public static void checkAllocation(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes: " + bytes + " (expected > 0)");
        }
    }
}
