package io.tierkv.observe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.event.KvBlockHash;
import io.tierkv.core.event.KvMedium;
import io.tierkv.tiers.events.KvEvent;
import io.tierkv.tiers.events.KvEventBatch;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;
import org.msgpack.core.MessageUnpacker;

/** The encoder's own int loop against msgpack-core's packInt, and a batch decoded back field by field. */
class KvEventEncoderTest {

    private static byte[] viaPackInt(int[] values) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (MessagePacker packer = MessagePack.newDefaultPacker(out)) {
            for (int v : values) {
                packer.packInt(v);
            }
        }
        return out.toByteArray();
    }

    @Test
    void bulkIntsEqualMsgpackCorePackIntByteForByteAtEveryFormatBoundary() throws Exception {
        int[] edges = {0, 1, 127, 128, 255, 256, 65_535, 65_536, Integer.MAX_VALUE, -1, -31, -32, -33, -127, -128,
            -129, -32_767, -32_768, -32_769, Integer.MIN_VALUE};
        Random random = new Random(7);
        int[] values = new int[edges.length + 10_000];
        System.arraycopy(edges, 0, values, 0, edges.length);
        for (int i = edges.length; i < values.length; i++) {
            values[i] = random.nextInt() >> random.nextInt(32); // every magnitude
        }
        byte[] dst = new byte[MsgpackInts.capacityFor(values.length)];
        int n = MsgpackInts.encode(values, values.length, dst);
        assertArrayEquals(viaPackInt(values), java.util.Arrays.copyOf(dst, n));
    }

    /** vLLM's layout packed one field per msgpack-core call: the reference the encoder's constant runs must equal. */
    private static byte[] packedFieldByField(KvEventBatch batch, int rank) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (MessagePacker p = MessagePack.newDefaultPacker(out)) {
            p.packArrayHeader(3);
            p.packDouble(batch.timestampSeconds());
            p.packArrayHeader(batch.events().size());
            for (KvEvent e : batch.events()) {
                switch (e) {
                    case KvEvent.BlockStored s -> {
                        p.packArrayHeader(8);
                        p.packString("BlockStored");
                        p.packArrayHeader(1);
                        p.packLong(s.hash().hi());
                        if (s.parentHash() == null) {
                            p.packNil();
                        } else {
                            p.packLong(s.parentHash().hi());
                        }
                        p.packArrayHeader(s.tokenIds().length);
                        for (int t : s.tokenIds()) {
                            p.packInt(t);
                        }
                        p.packInt(s.blockSizeTokens());
                        p.packNil();
                        p.packString(s.medium().name());
                        p.packNil();
                    }
                    case KvEvent.BlockRemoved r -> {
                        p.packArrayHeader(3);
                        p.packString("BlockRemoved");
                        p.packArrayHeader(1);
                        p.packLong(r.hash().hi());
                        p.packString(r.medium().name());
                    }
                    case KvEvent.AllBlocksCleared c -> {
                        p.packArrayHeader(1);
                        p.packString("AllBlocksCleared");
                    }
                }
            }
            p.packInt(rank);
        }
        return out.toByteArray();
    }

    @Test
    void aBatchEqualsVllmsLayoutPackedFieldByFieldByteForByte() throws Exception {
        long seed = 20261203L;
        Random random = new Random(seed);
        KvMedium[] media = KvMedium.values();
        List<KvEvent> events = new java.util.ArrayList<>();
        for (int i = 0; i < 5_000; i++) { // well past the encoder's first 64 KiB
            KvBlockHash hash = new KvBlockHash(random.nextLong() >> random.nextInt(64), random.nextLong());
            KvMedium medium = media[random.nextInt(media.length)];
            switch (random.nextInt(3)) {
                case 0 -> {
                    // now and then a block of 5,000 ids: a payload past the packer's 8 KiB flush threshold
                    int[] tokens = new int[random.nextInt(100) == 0 ? 5_000 : 1 + random.nextInt(20)];
                    for (int t = 0; t < tokens.length; t++) {
                        tokens[t] = random.nextInt() >> random.nextInt(32);
                    }
                    KvBlockHash parent = random.nextBoolean() ? null
                            : new KvBlockHash(random.nextLong() >> random.nextInt(64), 1);
                    events.add(new KvEvent.BlockStored(hash, parent, tokens, tokens.length, medium));
                }
                case 1 -> events.add(new KvEvent.BlockRemoved(hash, medium));
                default -> events.add(new KvEvent.AllBlocksCleared());
            }
        }
        KvEventBatch batch = new KvEventBatch(9, 1.7e9 + random.nextDouble(), events, 0);
        int rank = 300;
        byte[] reference = packedFieldByField(batch, rank);
        assertTrue(reference.length > 1 << 17, "grows the buffer: " + reference.length);
        assertArrayEquals(reference, new KvEventEncoder(rank).encode(batch), "seed " + seed);
    }

    @Test
    void aBatchDecodesBackToItsFieldsAndEncodingIsRepeatable() throws Exception {
        int[] tokens = {5, 70_000, -3, 200};
        KvEventBatch batch = new KvEventBatch(3, 12.5, List.of(
                new KvEvent.BlockStored(new KvBlockHash(-9, 1), null, tokens, 4, KvMedium.GPU),
                new KvEvent.BlockStored(new KvBlockHash(11, 2), new KvBlockHash(-9, 1), tokens, 4, KvMedium.DISK),
                new KvEvent.BlockRemoved(new KvBlockHash(11, 2), KvMedium.REMOTE),
                new KvEvent.AllBlocksCleared()), 0);
        KvEventEncoder encoder = new KvEventEncoder(2);
        byte[] first = encoder.encode(batch);
        assertArrayEquals(first, encoder.encode(batch), "the reused buffer leaves nothing behind");
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(first)) {
            assertEquals(3, u.unpackArrayHeader());
            assertEquals(12.5, u.unpackDouble());
            assertEquals(4, u.unpackArrayHeader());
            for (int e = 0; e < 2; e++) {
                assertEquals(8, u.unpackArrayHeader());
                assertEquals("BlockStored", u.unpackString());
                assertEquals(1, u.unpackArrayHeader());
                assertEquals(e == 0 ? -9 : 11, u.unpackLong());
                if (e == 0) {
                    assertTrue(u.tryUnpackNil());
                } else {
                    assertEquals(-9, u.unpackLong());
                }
                assertEquals(4, u.unpackArrayHeader());
                for (int t : tokens) {
                    assertEquals(t, u.unpackInt());
                }
                assertEquals(4, u.unpackInt());
                assertTrue(u.tryUnpackNil());
                assertEquals(e == 0 ? "GPU" : "DISK", u.unpackString());
                assertTrue(u.tryUnpackNil());
            }
            assertEquals(3, u.unpackArrayHeader());
            assertEquals("BlockRemoved", u.unpackString());
            assertEquals(1, u.unpackArrayHeader());
            assertEquals(11, u.unpackLong());
            assertEquals("REMOTE", u.unpackString());
            assertEquals(1, u.unpackArrayHeader());
            assertEquals("AllBlocksCleared", u.unpackString());
            assertEquals(2, u.unpackInt());
            assertTrue(!u.hasNext());
        }
    }
}
