package io.tierkv.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.remote.testing.RedisTargets;
import io.tierkv.remote.testing.RedisProcess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The store against a real standalone server: round trips, write-once, lookups, verification. */
class RemoteStoreTest {

    private static final long FINGERPRINT = KvLayout.of(2, 2, 64, DType.F16, 16).fingerprint();
    private static RedisTargets server;
    private static PlainClient plain;

    private final Arena arena = Arena.ofShared();
    private RemoteStore store;

    @BeforeAll
    static void startServer() throws Exception {
        server = RedisTargets.standalone();
        URI u = URI.create(server.url());
        plain = new PlainClient(u.getHost(), u.getPort());
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (plain != null) {
            plain.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** Options on a fresh namespace, so test runs sharing a server never see each other's keys. */
    static RemoteOptions options() {
        return RemoteOptions.of(server.url()).withNamespace("t" + UUID.randomUUID().toString().substring(0, 8))
                .withTimeoutNanos(TimeUnit.SECONDS.toNanos(5));
    }

    @BeforeEach
    void open() {
        store = RemoteStore.open(options(), FINGERPRINT);
    }

    @AfterEach
    void close() {
        store.close();
        arena.close();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 4096, 65_539, 1 << 20, 2 << 20})
    void blocksOfSeveralSizesComeBackByteForByte(int size) {
        TestBlocks b = new TestBlocks(arena, 42 + size, size, 16);
        for (int i = 0; i < 3; i++) {
            assertTrue(store.put(b.hi(i), b.lo(i), b.identity(i), b.payload(i)), "put " + i);
        }
        for (int i = 0; i < 3; i++) {
            MemorySegment dst = b.dst();
            assertTrue(store.get(b.hi(i), b.lo(i), b.identity(i), dst), "get " + i);
            assertTrue(b.holds(dst, i), "bytes of block " + i);
        }
        RemoteStats s = store.stats();
        assertEquals(3, s.puts());
        assertEquals(3, s.hits());
        assertEquals(0, s.misses());
        assertEquals(3L * size, s.bytesWritten());
        assertEquals(3L * size, s.bytesRead());
        assertEquals(0, s.inFlightBytes());
    }

    @Test
    void aSecondPutOfTheSameKeyDoesNotOverwrite() {
        TestBlocks b = new TestBlocks(arena, 7, 4096, 16);
        assertTrue(store.put(b.hi(0), b.lo(0), b.identity(0), b.payload(0)));
        assertFalse(store.put(b.hi(0), b.lo(0), b.identity(0), b.payload(1)), "write-once");
        MemorySegment dst = b.dst();
        assertTrue(store.get(b.hi(0), b.lo(0), b.identity(0), dst));
        assertTrue(b.holds(dst, 0), "the first value stays");
        assertEquals(1, store.stats().puts());
        assertEquals(1, store.stats().putsPresent());
    }

    @Test
    void lookupCountsLeadingKeysAndStopsAtTheFirstMiss() {
        TestBlocks b = new TestBlocks(arena, 8, 1024, 16);
        for (int i : new int[] {0, 1, 2, 4, 5}) {
            assertTrue(store.put(b.hi(i), b.lo(i), b.identity(i), b.payload(i)));
        }
        assertEquals(3, store.lookup(b.his(6), b.los(6), 6));
        assertEquals(2, store.lookup(b.his(6), b.los(6), 2));
        assertEquals(0, store.lookup(b.his(6), b.los(6), 0));
        long[] hi = b.his(6);
        long[] lo = b.los(6);
        hi[0] ^= 1;
        assertEquals(0, store.lookup(hi, lo, 6), "a chain whose first block is absent");
        assertEquals(4, store.stats().lookups());
        assertEquals(5, store.stats().lookupKeysFound());
    }

    @Test
    void getAllReadsTheLeadingBlocksOfAChain() {
        TestBlocks b = new TestBlocks(arena, 9, 65_536, 16);
        for (int i : new int[] {0, 1, 2, 4}) {
            assertTrue(store.put(b.hi(i), b.lo(i), b.identity(i), b.payload(i)));
        }
        MemorySegment[] ids = new MemorySegment[5];
        MemorySegment[] dsts = new MemorySegment[5];
        for (int i = 0; i < 5; i++) {
            ids[i] = b.identity(i);
            dsts[i] = b.dst();
        }
        assertEquals(3, store.getAll(b.his(5), b.los(5), ids, dsts, 5));
        for (int i = 0; i < 3; i++) {
            assertTrue(b.holds(dsts[i], i), "block " + i);
        }
        assertTrue(TestBlocks.untouched(dsts[3]), "an absent block's destination is not written");
        assertEquals(5, store.stats().gets());
        assertEquals(3, store.stats().hits());
        assertEquals(2, store.stats().misses());
    }

    /** A prefix match's calls share one deadline; one already passed sends nothing and counts a timeout. */
    @Test
    void aCallerDeadlineAlreadyPassedSendsNothingAndCountsOneTimeout() {
        TestBlocks b = new TestBlocks(arena, 12, 4096, 16);
        assertTrue(store.put(b.hi(0), b.lo(0), b.identity(0), b.payload(0)));
        long passed = System.nanoTime() - 1;
        assertEquals(0, store.lookup(b.his(1), b.los(1), 1, passed));
        MemorySegment dst = b.dst();
        assertEquals(0, store.getAll(b.his(1), b.los(1), new MemorySegment[] {b.identity(0)},
                new MemorySegment[] {dst}, 1, passed));
        assertTrue(TestBlocks.untouched(dst), "nothing read");
        RemoteStats st = store.stats();
        assertEquals(2, st.timeouts(), st.toString());
        assertEquals(1, st.misses(), st.toString());
        assertEquals(0, st.lookupKeysFound(), st.toString());
        assertEquals("CLOSED", st.breakerState().name(), "a caller's spent deadline is not the server's failure");
        long later = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
        assertEquals(1, store.lookup(b.his(1), b.los(1), 1, later), "a deadline ahead: answered");
        assertEquals(1, store.getAll(b.his(1), b.los(1), new MemorySegment[] {b.identity(0)},
                new MemorySegment[] {dst}, 1, later));
        assertTrue(b.holds(dst, 0));
    }

    @Test
    void aValueOfAnotherIdentityIsACollisionMissAndIsKept() {
        TestBlocks b = new TestBlocks(arena, 10, 4096, 16);
        assertTrue(store.put(b.hi(0), b.lo(0), b.identity(0), b.payload(0)));
        MemorySegment dst = b.dst();
        assertFalse(store.get(b.hi(0), b.lo(0), b.identity(1), dst), "another identity under the same hash");
        assertTrue(TestBlocks.untouched(dst));
        TestBlocks shorter = new TestBlocks(arena, 10, 4096, 15);
        assertFalse(store.get(b.hi(0), b.lo(0), shorter.identity(0), dst), "an identity of another length");
        assertEquals(2, store.stats().collisions());
        assertEquals(0, store.stats().damagedDeleted());
        assertTrue(store.get(b.hi(0), b.lo(0), b.identity(0), dst), "the value is kept for its own reader");
        assertTrue(b.holds(dst, 0));
    }

    @Test
    void aCorruptedPayloadByteIsACountedMissAndTheValueIsDeleted() {
        TestBlocks b = new TestBlocks(arena, 11, 65_536, 16);
        assertTrue(store.put(b.hi(0), b.lo(0), b.identity(0), b.payload(0)));
        byte[] key = PlainClient.bytes(store.keyOf(b.hi(0), b.lo(0)));
        long offset = ValueFormat.HEADER_BYTES + b.identity(0).byteSize() + 12_345;
        byte[] one = plain.sync().getrange(key, offset, offset);
        plain.sync().setrange(key, offset, new byte[] {(byte) (one[0] ^ 0x01)});
        MemorySegment dst = b.dst();
        assertFalse(store.get(b.hi(0), b.lo(0), b.identity(0), dst));
        assertTrue(TestBlocks.untouched(dst), "no damaged byte reaches the reader");
        assertEquals(1, store.stats().damagedDeleted());
        assertEquals(1, store.stats().misses());
        awaitDeleted(key);
        assertTrue(store.put(b.hi(0), b.lo(0), b.identity(0), b.payload(0)), "the key can be written again");
        assertTrue(store.get(b.hi(0), b.lo(0), b.identity(0), dst));
        assertTrue(b.holds(dst, 0));
    }

    @Test
    void aDamagedHeaderOrATruncatedValueIsACountedMissAndIsDeleted() {
        TestBlocks b = new TestBlocks(arena, 12, 4096, 16);
        assertTrue(store.put(b.hi(0), b.lo(0), b.identity(0), b.payload(0)));
        assertTrue(store.put(b.hi(1), b.lo(1), b.identity(1), b.payload(1)));
        byte[] k0 = PlainClient.bytes(store.keyOf(b.hi(0), b.lo(0)));
        byte[] k1 = PlainClient.bytes(store.keyOf(b.hi(1), b.lo(1)));
        plain.sync().setrange(k0, 0, new byte[] {'X'});
        byte[] whole = plain.sync().get(k1);
        plain.sync().set(k1, java.util.Arrays.copyOf(whole, whole.length - 1));
        assertFalse(store.get(b.hi(0), b.lo(0), b.identity(0), b.dst()), "bad magic");
        assertFalse(store.get(b.hi(1), b.lo(1), b.identity(1), b.dst()), "one byte short");
        assertEquals(2, store.stats().damagedDeleted());
        awaitDeleted(k0);
        awaitDeleted(k1);
    }

    @Test
    void aKeyHoldingAListIsADamagedMissIsDeletedAndCanBeStoredAgain() {
        TestBlocks b = new TestBlocks(arena, 19, 4096, 16);
        try (RemoteStore strict = RemoteStore.open(options().withBreakerFailures(1), FINGERPRINT)) {
            for (int i = 0; i < 3; i++) {
                assertTrue(strict.put(b.hi(i), b.lo(i), b.identity(i), b.payload(i)));
            }
            byte[] k0 = PlainClient.bytes(strict.keyOf(b.hi(0), b.lo(0)));
            byte[] k1 = PlainClient.bytes(strict.keyOf(b.hi(1), b.lo(1)));
            for (byte[] k : new byte[][] {k0, k1}) {
                plain.sync().del(k);
                plain.sync().lpush(k, new byte[] {'x'});
            }
            MemorySegment dst = b.dst();
            assertFalse(strict.get(b.hi(0), b.lo(0), b.identity(0), dst), "a list is not a block");
            assertTrue(TestBlocks.untouched(dst));
            long[] hi = {b.hi(2), b.hi(1)};
            long[] lo = {b.lo(2), b.lo(1)};
            MemorySegment[] ids = {b.identity(2), b.identity(1)};
            MemorySegment[] dsts = {b.dst(), b.dst()};
            assertEquals(1, strict.getAll(hi, lo, ids, dsts, 2), "block 2, then the list under block 1's key");
            assertTrue(b.holds(dsts[0], 2));
            RemoteStats s = strict.stats();
            assertEquals(2, s.damagedDeleted(), s.toString());
            assertEquals(0, s.errors(), s.toString());
            assertEquals(BreakerState.CLOSED, s.breakerState(), s.toString());
            assertEquals(0, s.breakerTrips(), "a reply about a key's type is no failure of the server");
            awaitDeleted(k0);
            awaitDeleted(k1);
            assertEquals(0, strict.lookup(b.his(2), b.los(2), 2), "gone, so no longer counted as found");
            assertTrue(strict.put(b.hi(0), b.lo(0), b.identity(0), b.payload(0)), "block 0 can be stored again");
            assertTrue(strict.put(b.hi(1), b.lo(1), b.identity(1), b.payload(1)), "block 1 too");
            assertEquals(3, strict.lookup(b.his(3), b.los(3), 3));
            assertTrue(strict.get(b.hi(1), b.lo(1), b.identity(1), dst));
            assertTrue(b.holds(dst, 1));
        }
    }

    @Test
    void aValueOfAnotherLayoutIsForeignAndIsDeleted() {
        TestBlocks b = new TestBlocks(arena, 13, 4096, 16);
        assertTrue(store.put(b.hi(0), b.lo(0), b.identity(0), b.payload(0)));
        long otherFingerprint = KvLayout.of(2, 2, 64, DType.BF16, 16).fingerprint();
        try (RemoteStore other = RemoteStore.open(store.options(), otherFingerprint)) {
            byte[] ours = plain.sync().get(PlainClient.bytes(store.keyOf(b.hi(0), b.lo(0))));
            byte[] theirs = PlainClient.bytes(other.keyOf(b.hi(0), b.lo(0)));
            plain.sync().set(theirs, ours);
            assertFalse(other.get(b.hi(0), b.lo(0), b.identity(0), b.dst()));
            assertEquals(1, other.stats().foreignDeleted());
            awaitDeleted(theirs);
        }
    }

    @Test
    void aStoredPayloadOfAnotherLengthIsMismatchedAndIsDeleted() {
        TestBlocks b = new TestBlocks(arena, 14, 4096, 16);
        assertTrue(store.put(b.hi(0), b.lo(0), b.identity(0), b.payload(0)));
        MemorySegment bigger = arena.allocate(8192);
        assertFalse(store.get(b.hi(0), b.lo(0), b.identity(0), bigger));
        assertEquals(1, store.stats().mismatchedDeleted());
        awaitDeleted(PlainClient.bytes(store.keyOf(b.hi(0), b.lo(0))));
    }

    @Test
    void aTtlIsSetOnEveryValue() {
        TestBlocks b = new TestBlocks(arena, 15, 64, 4);
        try (RemoteStore ttl = RemoteStore.open(options().withTtlSeconds(300), FINGERPRINT)) {
            assertTrue(ttl.put(b.hi(0), b.lo(0), b.identity(0), b.payload(0)));
            long seconds = plain.sync().ttl(PlainClient.bytes(ttl.keyOf(b.hi(0), b.lo(0))));
            assertTrue(seconds > 290 && seconds <= 300, "TTL " + seconds);
        }
        assertEquals(-1, plain.sync().ttl(PlainClient.bytes(putOne(b))), "no TTL by default");
    }

    private String putOne(TestBlocks b) {
        assertTrue(store.put(b.hi(1), b.lo(1), b.identity(1), b.payload(1)));
        return store.keyOf(b.hi(1), b.lo(1));
    }

    @Test
    void aWriteBeyondTheInFlightBoundIsDroppedAndCounted() {
        TestBlocks b = new TestBlocks(arena, 16, 4096, 16);
        try (RemoteStore small = RemoteStore.open(options().withMaxInFlightBytes(4096), FINGERPRINT)) {
            assertFalse(small.put(b.hi(0), b.lo(0), b.identity(0), b.payload(0)), "4096 + header > 4096");
            assertEquals(1, small.stats().putsDropped());
            assertEquals(0, small.stats().inFlightBytes());
            assertEquals(0, small.lookup(b.his(1), b.los(1), 1), "nothing was sent");
        }
    }

    @Test
    void badArgumentsAndUseAfterCloseAreCleanErrors() {
        TestBlocks b = new TestBlocks(arena, 17, 64, 4);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> store.lookup(new long[2], new long[3], 3));
        assertEquals("count: 3 (expected 0 <= count <= 2, the shortest array's length)", e.getMessage());
        store.close();
        IllegalStateException closed = assertThrows(IllegalStateException.class,
                () -> store.get(b.hi(0), b.lo(0), b.identity(0), b.dst()));
        assertTrue(closed.getMessage().startsWith("RemoteStore: closed"), closed.getMessage());
        store.close();
    }

    @Test
    void aServerThatIsNotThereFailsTheOpenWithItsUrl() {
        RemoteUnavailableException e = assertThrows(RemoteUnavailableException.class,
                () -> RemoteStore.open(RemoteOptions.of("redis://127.0.0.1:1").withConnectTimeoutNanos(
                        TimeUnit.MILLISECONDS.toNanos(500)), FINGERPRINT));
        assertEquals("redis://127.0.0.1:1", e.url());
    }

    /** Waits up to 5 s for a key to be gone (the store deletes without waiting). */
    static void awaitDeleted(byte[] key) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (plain.sync().exists(key) != 0) {
            assertTrue(System.nanoTime() < deadline, "key not deleted: " + new String(key));
            RedisProcess.sleep(5);
        }
    }
}
