package io.tierkv.observe;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * Encodes an array of ints as msgpack integers, byte for byte as msgpack-core's
 * {@code MessagePacker.packInt} does (the smallest format of the msgpack specification's "int
 * format family": positive fixint, uint 8/16/32 for non-negative values, negative fixint, int
 * 8/16/32 for negative ones; github.com/msgpack/msgpack, spec.md), but in one pass over the
 * array into a byte array. msgpack-core has no bulk form and costs a call per value, so a
 * BlockStored's token ids, the bulk of every batch, are encoded here and handed to the packer as
 * one payload.
 *
 * <p>Without branches on the value: real token ids fall on both sides of 2^16 at random (a
 * 128,256-id vocabulary puts half of them above it), so a branch per format would be mispredicted
 * about every other id. Instead each value's format is looked up by its bit length, and its
 * encoding is written as one 8-byte big-endian word (the format byte, then the value in its
 * width, then bytes the next value overwrites), advancing by the format's length.
 *
 * <pre>{@code
 * index = bit length of v (v >= 0), or 33 + bit length of ~v (v < 0)
 * word  = HEAD[index] | (v & MASK[index]) << SHIFT[index];  advance LENGTH[index] bytes
 * }</pre>
 *
 * <p>Stateless and thread-safe.
 */
final class MsgpackInts {

    /** Most bytes one int takes (a format byte and 4 bytes). */
    static final int MAX_BYTES_PER_INT = 5;
    /** Bytes past the last value's encoding that {@link #encode} may write (its 8-byte words). */
    static final int SLACK_BYTES = Long.BYTES - 1;
    private static final VarHandle LONG_BE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final long[] HEAD = new long[66];
    private static final long[] MASK = new long[66];
    private static final int[] SHIFT = new int[66];
    private static final int[] LENGTH = new int[66];

    static {
        for (int bits = 0; bits <= 32; bits++) { // v >= 0 of this bit length (32 only for none: v < 2^31)
            int i = bits;
            if (bits <= 7) {
                set(i, 0, 1, 0xFFL); // positive fixint 0xxxxxxx
            } else if (bits <= 8) {
                set(i, 0xcc, 2, 0xFFL); // uint 8
            } else if (bits <= 16) {
                set(i, 0xcd, 3, 0xFFFFL); // uint 16
            } else {
                set(i, 0xce, 5, 0xFFFF_FFFFL); // uint 32
            }
        }
        for (int bits = 0; bits <= 32; bits++) { // v < 0 whose complement ~v has this bit length
            int i = 33 + bits;
            if (bits <= 5) {
                set(i, 0, 1, 0xFFL); // negative fixint 111xxxxx: v >= -32
            } else if (bits <= 7) {
                set(i, 0xd0, 2, 0xFFL); // int 8: v >= -128
            } else if (bits <= 15) {
                set(i, 0xd1, 3, 0xFFFFL); // int 16: v >= -32768
            } else {
                set(i, 0xd2, 5, 0xFFFF_FFFFL); // int 32
            }
        }
    }

    private static void set(int i, int head, int length, long mask) {
        HEAD[i] = (long) head << 56;
        LENGTH[i] = length;
        MASK[i] = mask;
        // a one-byte encoding is the value itself in the top byte; otherwise the value follows the format byte
        SHIFT[i] = length == 1 ? 56 : 8 * (8 - length);
    }

    private MsgpackInts() {
    }

    /**
     * {@return the room {@link #encode} needs in its destination for count values}
     *
     * @param count values, >= 0
     */
    static int capacityFor(int count) {
        return count * MAX_BYTES_PER_INT + SLACK_BYTES;
    }

    /**
     * Encodes {@code values[0, count)}.
     *
     * @param values the ints
     * @param count  how many, >= 0
     * @param dst    where to write, with room for {@link #capacityFor capacityFor(count)} bytes
     *               (bytes past the returned length may be overwritten)
     * @return the bytes of the encoding, from index 0
     * @throws IndexOutOfBoundsException if dst has less room than {@code capacityFor(count)} or
     *                                   values fewer than count
     */
    static int encode(int[] values, int count, byte[] dst) {
        Objects.checkFromIndexSize(0, count, values.length);
        Objects.checkFromIndexSize(0, capacityFor(count), dst.length);
        int p = 0;
        for (int i = 0; i < count; i++) {
            int v = values[i];
            int index = v >= 0 ? 32 - Integer.numberOfLeadingZeros(v) : 65 - Integer.numberOfLeadingZeros(~v);
            LONG_BE.set(dst, p, HEAD[index] | (v & MASK[index]) << SHIFT[index]);
            p += LENGTH[index];
        }
        return p;
    }
}
