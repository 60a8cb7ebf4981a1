package io.tierkv.observe;

import io.tierkv.core.event.KvBlockHash;
import io.tierkv.core.event.KvMedium;
import io.tierkv.tiers.events.KvEventBatch;
import io.tierkv.tiers.events.KvEventView;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.Function;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;
import org.msgpack.core.buffer.MessageBuffer;
import org.msgpack.core.buffer.MessageBufferOutput;

/**
 * Encodes a {@link KvEventBatch} as the msgpack payload vLLM's {@code ZmqEventPublisher} sends:
 * its {@code KVEventBatch} and events are msgspec structs with {@code array_like=True}, and the
 * events are {@code tag=True}, so each is an array whose first element is the class name.
 *
 * <pre>
 * batch:             [ts float64 seconds since the epoch, [event, ...], data_parallel_rank int]
 * BlockStored:       ["BlockStored", [block_hash int64], parent_block_hash int64 | nil,
 *                     [token_id int, ...], block_size int, lora_id nil, medium str, lora_name nil]
 * BlockRemoved:      ["BlockRemoved", [block_hash int64], medium str]
 * AllBlocksCleared:  ["AllBlocksCleared"]
 * </pre>
 *
 * Each event names one block ({@code block_hashes} has one element). Hashes are TierKV's 128-bit
 * block hashes truncated to their high 64 bits ({@link KvBlockHash#wireHash()}: the first 8 bytes
 * of the SHA-256-derived digest, big-endian), sent as a signed {@code int64} msgpack integer, as
 * vLLM sends its integer {@code ExternalBlockHash}. {@code medium} is {@code "GPU"}, {@code "CPU"},
 * {@code "DISK"} or {@code "REMOTE"}. {@code lora_name} (vLLM's field after {@code medium} in its
 * newer releases) is sent as nil so that decoders of both layouts accept the array; older
 * decoders ignore the extra trailing element.
 *
 * <p>Not thread-safe: one encoder per thread (it reuses its buffer, so a steady stream of batches
 * allocates nothing but the arrays {@link #encode} returns).
 */
public final class KvEventEncoder {

    /*
     * The constant runs of each event, packed once by msgpack-core and written as one payload per
     * run, so an event costs the packer five calls for its variable fields rather than a dozen.
     */
    /** {@code [8-array, "BlockStored", 1-array]}: a BlockStored up to its hash. */
    private static final byte[] STORED_HEAD = constant(p -> {
        p.packArrayHeader(8);
        packString(p, "BlockStored");
        p.packArrayHeader(1);
    });
    /** Per medium: {@code [nil (lora_id), medium, nil (lora_name)]}: a BlockStored after block_size. */
    private static final byte[][] STORED_TAIL = perMedium(m -> p -> {
        p.packNil();
        packString(p, m.name());
        p.packNil();
    });
    /** {@code [3-array, "BlockRemoved", 1-array]}: a BlockRemoved up to its hash. */
    private static final byte[] REMOVED_HEAD = constant(p -> {
        p.packArrayHeader(3);
        packString(p, "BlockRemoved");
        p.packArrayHeader(1);
    });
    /** Per medium: the medium's string. */
    private static final byte[][] MEDIUM = perMedium(m -> p -> packString(p, m.name()));
    /** {@code ["AllBlocksCleared"]}. */
    private static final byte[] ALL_BLOCKS_CLEARED = constant(p -> {
        p.packArrayHeader(1);
        packString(p, "AllBlocksCleared");
    });

    private final int dataParallelRank;
    /** What the packer writes into, in place; reused, so a steady stream of batches allocates nothing. */
    private final Bytes out = new Bytes();
    private final MessagePacker packer = MessagePack.newDefaultPacker(out);
    /** An event's token ids, copied out of the view in one go; grows to B. */
    private int[] scratch = new int[0];
    /** The same ids as msgpack integers ({@link MsgpackInts}). */
    private byte[] encoded = new byte[0];

    /**
     * The packer's output: one growing array that the packer writes into directly (each buffer it
     * asks for is a {@link MessageBuffer#wrap} of the array's free tail), so a batch is packed
     * without the copy per flush that an {@code OutputStream} sink costs.
     */
    private static final class Bytes implements MessageBufferOutput {
        private byte[] array = new byte[1 << 16];
        /** Bytes written and flushed, from index 0. */
        private int size;

        void reset() {
            size = 0;
        }

        byte[] array() {
            return array;
        }

        int size() {
            return size;
        }

        private void ensureFree(int bytes) {
            if (array.length - size < bytes) {
                array = Arrays.copyOf(array, Math.max(2 * array.length, Math.addExact(size, bytes)));
            }
        }

        @Override
        public MessageBuffer next(int minimumSize) {
            ensureFree(Math.max(minimumSize, 1 << 12));
            return MessageBuffer.wrap(array, size, array.length - size);
        }

        @Override
        public void writeBuffer(int length) {
            size += length; // the packer wrote these bytes into the wrapped tail
        }

        @Override
        public void write(byte[] buffer, int offset, int length) {
            ensureFree(length);
            System.arraycopy(buffer, offset, array, size, length);
            size += length;
        }

        @Override
        public void add(byte[] buffer, int offset, int length) {
            write(buffer, offset, length);
        }

        @Override
        public void flush() {
            // the bytes are in the array already
        }

        @Override
        public void close() {
            // nothing to release
        }
    }

    /**
     * Creates an encoder.
     *
     * @param dataParallelRank the batch's {@code data_parallel_rank}, >= 0
     * @throws IllegalArgumentException if dataParallelRank is negative, naming it
     */
    public KvEventEncoder(int dataParallelRank) {
        if (dataParallelRank < 0) {
            throw new IllegalArgumentException("dataParallelRank: " + dataParallelRank + " (expected >= 0)");
        }
        this.dataParallelRank = dataParallelRank;
    }

    /** Something packed into a constant. */
    private interface Packing {
        void packTo(MessagePacker p) throws IOException;
    }

    private static byte[] constant(Packing packing) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            packing.packTo(p);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException("msgpack into memory failed", e);
        }
    }

    private static byte[][] perMedium(Function<KvMedium, Packing> packing) {
        return Arrays.stream(KvMedium.values()).map(m -> constant(packing.apply(m))).toArray(byte[][]::new);
    }

    private static void packString(MessagePacker p, String s) throws IOException {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        p.packRawStringHeader(utf8.length);
        p.writePayload(utf8);
    }

    /**
     * Encodes one batch.
     *
     * @param batch the batch
     * @return the msgpack bytes; a fresh array
     * @throws NullPointerException if batch is null
     */
    public byte[] encode(KvEventBatch batch) {
        return encode(batch.timestampSeconds(), KvEventView.of(batch.events()));
    }

    /**
     * Encodes one batch given as a view.
     *
     * @param timestampSeconds the batch's {@code ts}, seconds since the epoch
     * @param events           the events
     * @return the msgpack bytes; a fresh array
     * @throws NullPointerException if events is null
     */
    public byte[] encode(double timestampSeconds, KvEventView events) {
        int n = encodeInPlace(timestampSeconds, events);
        return Arrays.copyOf(out.array(), n);
    }

    /**
     * Encodes one batch into this encoder's buffer ({@link #buffer()}), valid until the next call.
     *
     * @param timestampSeconds the batch's {@code ts}
     * @param events           the events
     * @return the payload's length in bytes, at the start of {@link #buffer()}
     */
    int encodeInPlace(double timestampSeconds, KvEventView events) {
        out.reset();
        try {
            packer.packArrayHeader(3);
            packer.packDouble(timestampSeconds);
            int n = events.size();
            packer.packArrayHeader(n);
            for (int i = 0; i < n; i++) {
                pack(events, i);
            }
            packer.packInt(dataParallelRank);
            packer.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("msgpack into memory failed", e); // a memory sink does not do I/O
        }
        return out.size();
    }

    /** {@return the buffer {@link #encodeInPlace} wrote; not copied} */
    byte[] buffer() {
        return out.array();
    }

    private void pack(KvEventView events, int i) throws IOException {
        switch (events.type(i)) {
            case BLOCK_STORED -> {
                packer.writePayload(STORED_HEAD);
                packer.packLong(events.hashHi(i)); // KvBlockHash.wireHash(): the high 64 bits
                if (events.hasParent(i)) {
                    packer.packLong(events.parentHashHi(i));
                } else {
                    packer.packNil();
                }
                int tokens = events.tokenCount(i);
                if (scratch.length < tokens) {
                    scratch = new int[tokens];
                    encoded = new byte[MsgpackInts.capacityFor(tokens)];
                }
                events.copyTokenIds(i, scratch, 0);
                packer.packArrayHeader(tokens);
                packer.writePayload(encoded, 0, MsgpackInts.encode(scratch, tokens, encoded));
                packer.packInt(events.blockSizeTokens(i));
                packer.writePayload(STORED_TAIL[events.medium(i).ordinal()]);
            }
            case BLOCK_REMOVED -> {
                packer.writePayload(REMOVED_HEAD);
                packer.packLong(events.hashHi(i));
                packer.writePayload(MEDIUM[events.medium(i).ordinal()]);
            }
            case ALL_BLOCKS_CLEARED -> packer.writePayload(ALL_BLOCKS_CLEARED);
        }
    }
}
