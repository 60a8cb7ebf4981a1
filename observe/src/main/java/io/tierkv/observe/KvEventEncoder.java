package io.tierkv.observe;

import io.tierkv.core.event.KvBlockHash;
import io.tierkv.tiers.events.KvEvent;
import io.tierkv.tiers.events.KvEventBatch;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

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
 * <p>Not thread-safe: one encoder per thread (it reuses its buffer).
 */
public final class KvEventEncoder {

    private final int dataParallelRank;
    private final MessageBufferPacker packer = MessagePack.newDefaultBufferPacker();

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

    /**
     * Encodes one batch.
     *
     * @param batch the batch
     * @return the msgpack bytes; a fresh array
     * @throws NullPointerException if batch is null
     */
    public byte[] encode(KvEventBatch batch) {
        packer.clear();
        try {
            packer.packArrayHeader(3);
            packer.packDouble(batch.timestampSeconds());
            packer.packArrayHeader(batch.events().size());
            for (KvEvent e : batch.events()) {
                pack(e);
            }
            packer.packInt(dataParallelRank);
            return packer.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException("msgpack into memory failed", e); // a buffer packer does not do I/O
        }
    }

    private void pack(KvEvent e) throws IOException {
        switch (e) {
            case KvEvent.BlockStored s -> {
                packer.packArrayHeader(8);
                packer.packString("BlockStored");
                packer.packArrayHeader(1);
                packer.packLong(s.hash().wireHash());
                if (s.parentHash() == null) {
                    packer.packNil();
                } else {
                    packer.packLong(s.parentHash().wireHash());
                }
                packer.packArrayHeader(s.tokenIds().length);
                for (int t : s.tokenIds()) {
                    packer.packInt(t);
                }
                packer.packInt(s.blockSizeTokens());
                packer.packNil(); // lora_id
                packer.packString(s.medium().name());
                packer.packNil(); // lora_name
            }
            case KvEvent.BlockRemoved r -> {
                packer.packArrayHeader(3);
                packer.packString("BlockRemoved");
                packer.packArrayHeader(1);
                packer.packLong(r.hash().wireHash());
                packer.packString(r.medium().name());
            }
            case KvEvent.AllBlocksCleared c -> {
                packer.packArrayHeader(1);
                packer.packString("AllBlocksCleared");
            }
        }
    }
}
