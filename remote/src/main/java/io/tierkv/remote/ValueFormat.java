package io.tierkv.remote;

import io.netty.buffer.ByteBuf;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The one descriptor of a remote value: one Redis string per block, a fixed little-endian header,
 * the block identity, then the payload (DESIGN.md, "Remote tier"; one value per block because
 * LMCache's separate metadata and payload keys were evicted separately).
 *
 * <pre>
 *  0  int   magic {@link #MAGIC} ("TKVR" read as little-endian bytes 'R','V','K','T')
 *  4  short version {@link #VERSION}
 *  6  short flags, 0
 *  8  long  layout fingerprint (KvLayout.fingerprint())
 * 16  int   identity length I, in [0, {@link #MAX_IDENTITY_BYTES}]
 * 20  int   payload length P
 * 24  int   CRC32C over the I identity bytes then the P payload bytes
 * 28        identity (I bytes), then payload (P bytes); the value is exactly 28 + I + P bytes
 * </pre>
 *
 * <p>Stateless and thread-safe.
 */
final class ValueFormat {

    private ValueFormat() {}

    /** Little-endian, unaligned {@code int}. */
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Little-endian, unaligned {@code short}. */
    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Little-endian, unaligned {@code long}. */
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** First four bytes of every value. */
    static final int MAGIC = 0x544B5652;
    /** Format version; a value of another version is damaged to this reader. */
    static final short VERSION = 1;
    /** Offset of the magic. */
    static final int MAGIC_OFFSET = 0;
    /** Offset of the version. */
    static final int VERSION_OFFSET = 4;
    /** Offset of the flags. */
    static final int FLAGS_OFFSET = 6;
    /** Offset of the layout fingerprint. */
    static final int FINGERPRINT_OFFSET = 8;
    /** Offset of the identity length. */
    static final int IDENTITY_LENGTH_OFFSET = 16;
    /** Offset of the payload length. */
    static final int PAYLOAD_LENGTH_OFFSET = 20;
    /** Offset of the CRC32C. */
    static final int CRC_OFFSET = 24;
    /** Header bytes before the identity. */
    static final int HEADER_BYTES = 28;
    /** Largest identity: 1 MiB (a block of 262,136 tokens). */
    static final int MAX_IDENTITY_BYTES = 1 << 20;
    /**
     * Largest value: 512 MiB, Redis' default {@code proto-max-bulk-len}; the payload may be at
     * most this minus the header and identity.
     */
    static final int MAX_VALUE_BYTES = 512 << 20;

    /**
     * {@return the bytes of a value with this identity and payload: {@code 28 + I + P}}
     *
     * @param identityBytes I, checked by the caller
     * @param payloadBytes  P, checked by the caller
     */
    static int valueBytes(long identityBytes, long payloadBytes) {
        return Math.toIntExact(HEADER_BYTES + identityBytes + payloadBytes);
    }

    /**
     * CRC32C over the identity then the payload, as stored at {@link #CRC_OFFSET}.
     *
     * @param identity the identity bytes
     * @param payload  the payload bytes
     * @return the checksum (the low 32 bits of {@link CRC32C#getValue()})
     */
    static int crc(MemorySegment identity, MemorySegment payload) {
        CRC32C crc = new CRC32C();
        crc.update(identity.asByteBuffer());
        crc.update(payload.asByteBuffer());
        return (int) crc.getValue();
    }

    /**
     * Writes a whole value: header, identity, payload.
     *
     * @param target      where to write, at its writer index; grows as Netty buffers do
     * @param fingerprint the layout fingerprint
     * @param identity    the identity bytes
     * @param payload     the payload bytes
     * @param crc         {@link #crc(MemorySegment, MemorySegment)} of the two
     */
    static void write(ByteBuf target, long fingerprint, MemorySegment identity, MemorySegment payload, int crc) {
        target.ensureWritable(valueBytes(identity.byteSize(), payload.byteSize()));
        target.writeIntLE(MAGIC);
        target.writeShortLE(VERSION);
        target.writeShortLE(0);
        target.writeLongLE(fingerprint);
        target.writeIntLE((int) identity.byteSize());
        target.writeIntLE((int) payload.byteSize());
        target.writeIntLE(crc);
        target.writeBytes(identity.asByteBuffer());
        target.writeBytes(payload.asByteBuffer());
    }

    /**
     * Writes a value of the given length that every reader rejects as damaged (magic 0): what an
     * encoder sends for a write whose caller gave up before its bytes were read, so that the
     * command keeps the length Lettuce announced and the caller's memory is never read late.
     *
     * @param target      where to write
     * @param valueBytes  the announced length, at least {@link #HEADER_BYTES}
     */
    static void writePoison(ByteBuf target, int valueBytes) {
        target.writeZero(valueBytes);
    }

    /**
     * Checks a stored value against what the reader expects, without touching {@code dst}.
     *
     * @param value       the stored value (its whole length)
     * @param fingerprint the reader's layout fingerprint
     * @param identity    the identity the reader expects
     * @param dstBytes    the payload length the reader expects
     * @return {@link ReadOutcome#HIT} when the payload may be copied; otherwise why not
     */
    static ReadOutcome check(MemorySegment value, long fingerprint, MemorySegment identity, long dstBytes) {
        long n = value.byteSize();
        if (n < HEADER_BYTES || value.get(INT, MAGIC_OFFSET) != MAGIC || value.get(SHORT, VERSION_OFFSET) != VERSION) {
            return ReadOutcome.DAMAGED;
        }
        if (value.get(LONG, FINGERPRINT_OFFSET) != fingerprint) {
            return ReadOutcome.FOREIGN;
        }
        long idBytes = Integer.toUnsignedLong(value.get(INT, IDENTITY_LENGTH_OFFSET));
        long payloadBytes = Integer.toUnsignedLong(value.get(INT, PAYLOAD_LENGTH_OFFSET));
        if (HEADER_BYTES + idBytes + payloadBytes != n) {
            return ReadOutcome.DAMAGED;
        }
        CRC32C crc = new CRC32C();
        crc.update(value.asSlice(HEADER_BYTES).asByteBuffer());
        if ((int) crc.getValue() != value.get(INT, CRC_OFFSET)) {
            return ReadOutcome.DAMAGED;
        }
        if (payloadBytes != dstBytes) {
            return ReadOutcome.MISMATCHED;
        }
        if (idBytes != identity.byteSize()
                || MemorySegment.mismatch(value, HEADER_BYTES, HEADER_BYTES + idBytes, identity, 0, idBytes) != -1) {
            return ReadOutcome.COLLISION;
        }
        return ReadOutcome.HIT;
    }

    /**
     * {@return where the payload starts in a value that {@link #check} accepted}
     *
     * @param value the value
     */
    static long payloadOffset(MemorySegment value) {
        return HEADER_BYTES + Integer.toUnsignedLong(value.get(INT, IDENTITY_LENGTH_OFFSET));
    }
}
