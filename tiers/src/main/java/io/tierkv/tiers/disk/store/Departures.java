package io.tierkv.tiers.disk.store;

import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.tiers.disk.DiskOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

/**
 * Hands records the tier evicts to the {@link DepartureSink} (the tier below, a remote
 * store), just before their bytes go: the header is checked, the identity and payload checksum
 * verified, an LZ4 payload decoded into a scratch block; a record that fails any of these is not
 * handed on (a damaged record must not travel; it is dropped as the eviction intended, and no
 * counter of the disk tier changes). A raw payload is handed on as a view of the mapping, so the
 * sink copies it once.
 *
 * <p>Not thread-safe: used under the disk tier's lock, with its own checksum object, codec and
 * scratch block (the eviction may run inside a write that holds the tier's).
 */
final class Departures {

    private final RecordRules rules;
    private final RecordIndex index;
    private final SegmentTable segments;
    private final DiskOptions options;
    private final int dtypeBytes;
    private final CRC32C crc = new CRC32C();
    private volatile DepartureSink sink;
    private Arena arena;
    private BlockCodec codec;
    private MemorySegment scratch;

    Departures(RecordRules rules, RecordIndex index, SegmentTable segments, DiskOptions options, int dtypeBytes) {
        this.rules = rules;
        this.index = index;
        this.segments = segments;
        this.options = options;
        this.dtypeBytes = dtypeBytes;
    }

    /** Sets the sink ({@code null} for none); allocates the scratch block on first use. Lock held. */
    void setSink(DepartureSink s) {
        if (s != null && arena == null) {
            arena = Arena.ofShared();
            codec = new BlockCodec(options.compression(), options.shuffle(), dtypeBytes, rules.maxRaw(), arena);
            scratch = arena.allocate(rules.maxRaw(), 64);
        }
        this.sink = s;
    }

    /**
     * Hands the record in index slot {@code slot} to the sink if it verifies. Lock held; the
     * record is still in the index.
     *
     * @param slot the record's index slot
     */
    void handOff(int slot) {
        DepartureSink s = sink;
        if (s == null) {
            return;
        }
        Segment seg = segments.at(index.segment[slot]);
        long off = index.offset[slot];
        long len = index.length[slot];
        MemorySegment map = seg.map;
        long hi = index.hashHi[slot];
        long lo = index.hashLo[slot];
        if (rules.headerProblem(map, off, len, crc, seg.nonce, hi, lo) != null
                || RecordRules.payloadCrc(map, off, crc) != RecordHeaders.recordPayloadCrc(map, off)) {
            return; // the same checks as a read's, without its counting and quarantine
        }
        int tokens = RecordHeaders.recordTokenCount(map, off);
        int raw = RecordHeaders.recordRawLength(map, off);
        int stored = RecordHeaders.recordStoredLength(map, off);
        int codecByte = RecordHeaders.recordCodec(map, off);
        long identityOff = off + DiskFormat.RECORD_HEADER_BYTES;
        long payloadOff = off + DiskFormat.payloadOffset(tokens);
        MemorySegment payload;
        if (codecByte == DiskFormat.CODEC_RAW) {
            payload = map.asSlice(payloadOff, raw);
        } else if (codec.decode(map.asSlice(payloadOff, stored), codecByte, RecordHeaders.recordShuffleWidth(map, off),
                raw, scratch)) {
            payload = scratch.asSlice(0, raw);
        } else {
            return;
        }
        s.departing(hi, lo, map.asSlice(identityOff, BlockIdentity.bytes(tokens)), payload);
    }

    /** Frees the scratch block. Lock held, at close. */
    void close() {
        if (arena != null) {
            arena.close();
            arena = null;
        }
    }
}
