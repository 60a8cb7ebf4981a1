package io.tierkv.core.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

class KeptSlicesTest {

    @Test
    void aSliceIsKeptUntilAnotherIndexOfItsEntryReplacesIt() {
        try (Arena arena = Arena.ofConfined()) {
            int indices = KeptSlices.MAX_KEPT + 10;
            MemorySegment base = arena.allocate((long) indices * 16);
            KeptSlices kept = new KeptSlices(indices);
            MemorySegment first = kept.slice(3, base, 3 * 16, 16);
            assertEquals(base.address() + 48, first.address());
            assertEquals(16, first.byteSize());
            assertSame(first, kept.slice(3, base, 3 * 16, 16), "kept");
            int sameEntry = 3 + KeptSlices.MAX_KEPT;
            MemorySegment other = kept.slice(sameEntry, base, (long) sameEntry * 16, 16);
            assertEquals(base.address() + (long) sameEntry * 16, other.address(), "its own memory, not index 3's");
            MemorySegment again = kept.slice(3, base, 3 * 16, 16);
            assertNotSame(first, again, "replaced, so made again");
            assertEquals(first.address(), again.address());
            assertEquals(8, kept.slice(3, base, 3 * 16, 8).byteSize(), "another length is another slice");
            assertThrows(IndexOutOfBoundsException.class, () -> kept.slice(5, base, base.byteSize() - 8, 16));
            assertThrows(IllegalArgumentException.class, () -> new KeptSlices(0));
            MemorySegment heap = MemorySegment.ofArray(new byte[64]);
            var e = assertThrows(IllegalArgumentException.class, () -> kept.slice(1, heap, 0, 16));
            assertEquals("base: a heap segment (expected a native one: kept slices are told apart by address)",
                    e.getMessage());
        }
    }

    @Test
    void withAnEntryPerIndexEverySliceIsMadeOnceAndKept() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment base = arena.allocate(100 * 16);
            KeptSlices kept = new KeptSlices(100);
            for (int i = 0; i < 100; i++) {
                MemorySegment v = kept.slice(i, base, i * 16L, 16);
                assertEquals(base.address() + i * 16L, v.address());
                assertEquals(16, v.byteSize());
            }
            for (int i = 0; i < 100; i++) {
                assertSame(kept.slice(i, base, i * 16L, 16), kept.slice(i, base, i * 16L, 16));
                assertEquals(base.address() + i * 16L, kept.slice(i, base, i * 16L, 16).address());
            }
        }
    }
}
