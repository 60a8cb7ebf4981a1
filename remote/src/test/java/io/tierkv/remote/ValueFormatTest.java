package io.tierkv.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** The value format's checks, on values built in memory and damaged one field at a time. */
class ValueFormatTest {

    private static final long FP = 0x1234_5678_9abc_def0L;

    private static MemorySegment value(Arena arena, MemorySegment id, MemorySegment payload) {
        ByteBuf buf = Unpooled.directBuffer();
        try {
            ValueFormat.write(buf, FP, id, payload, ValueFormat.crc(id, payload));
            MemorySegment v = arena.allocate(buf.readableBytes());
            MemorySegment.copy(MemorySegment.ofBuffer(buf.nioBuffer()), 0, v, 0, v.byteSize());
            return v;
        } finally {
            buf.release();
        }
    }

    @Test
    void eachFieldIsCheckedAndAnsweredByItsOutcome() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment id = arena.allocate(40).fill((byte) 7);
            MemorySegment payload = arena.allocate(1000).fill((byte) 3);
            MemorySegment v = value(arena, id, payload);
            assertEquals(ValueFormat.HEADER_BYTES + 40 + 1000, v.byteSize());
            assertEquals(ReadOutcome.HIT, ValueFormat.check(v, FP, id, 1000));
            assertEquals(ReadOutcome.FOREIGN, ValueFormat.check(v, FP + 1, id, 1000));
            assertEquals(ReadOutcome.MISMATCHED, ValueFormat.check(v, FP, id, 999));
            MemorySegment otherId = arena.allocate(40).fill((byte) 8);
            assertEquals(ReadOutcome.COLLISION, ValueFormat.check(v, FP, otherId, 1000));
            assertEquals(ReadOutcome.DAMAGED, ValueFormat.check(v.asSlice(0, v.byteSize() - 1), FP, id, 999));
            assertEquals(ReadOutcome.DAMAGED, ValueFormat.check(v.asSlice(0, 10), FP, id, 1000));
            for (long off : new long[] {ValueFormat.MAGIC_OFFSET, ValueFormat.VERSION_OFFSET,
                    ValueFormat.IDENTITY_LENGTH_OFFSET, ValueFormat.PAYLOAD_LENGTH_OFFSET, ValueFormat.CRC_OFFSET,
                    ValueFormat.HEADER_BYTES + 3, v.byteSize() - 1}) {
                MemorySegment bad = arena.allocate(v.byteSize()).copyFrom(v);
                bad.set(ValueLayout.JAVA_BYTE, off, (byte) (bad.get(ValueLayout.JAVA_BYTE, off) ^ 0x10));
                assertEquals(ReadOutcome.DAMAGED, ValueFormat.check(bad, FP, id, 1000), "flipped at " + off);
            }
        }
    }
}
