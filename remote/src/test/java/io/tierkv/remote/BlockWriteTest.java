package io.tierkv.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** A block value encodes the same bytes every time Lettuce sends it, and never after abandon. */
class BlockWriteTest {

    private static ReadOutcome encodeAndCheck(BlockWrite w, MemorySegment id, int payloadBytes) {
        ByteBuf buf = Unpooled.directBuffer();
        try {
            w.encode(buf);
            assertEquals(w.valueBytes(), buf.readableBytes(), "the announced length");
            return ValueFormat.check(MemorySegment.ofBuffer(buf.nioBuffer()), 9, id, payloadBytes);
        } finally {
            buf.release();
        }
    }

    @Test
    void aResentCommandEncodesTheValueAgainAndAnAbandonedOneAPoisonOfTheSameLength() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment id = arena.allocate(36).fill((byte) 1);
            MemorySegment payload = arena.allocate(5000).fill((byte) 2);
            BlockWrite w = new BlockWrite(9, id, payload);
            assertEquals(ReadOutcome.HIT, encodeAndCheck(w, id, 5000), "first send");
            assertEquals(ReadOutcome.HIT, encodeAndCheck(w, id, 5000), "re-sent after a MOVED or a reconnect");
            w.abandon();
            payload.fill((byte) 3);
            assertEquals(ReadOutcome.DAMAGED, encodeAndCheck(w, id, 5000), "after abandon the caller's memory is not read");
        }
    }
}
