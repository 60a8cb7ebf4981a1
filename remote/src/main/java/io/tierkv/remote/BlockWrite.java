package io.tierkv.remote;

import io.netty.buffer.ByteBuf;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One block value on its way to the server: the caller's identity and payload segments, read
 * once, by the Netty event loop, when Lettuce encodes the {@code SET} command.
 *
 * <p>The caller's memory is read only while {@link #encode} runs, and never after
 * {@link #abandon()} returned: a caller whose put timed out calls {@code abandon()}, which
 * either wins (the encoder, if it ever runs, writes a value of the same length that readers reject
 * as damaged) or waits for an encode in progress to finish (a memory copy, microseconds). So a
 * timed-out put never reads memory its caller has already reused.
 *
 * <p>Thread-safe: the state is one atomic integer.
 */
final class BlockWrite implements RemoteValue {

    private static final int PENDING = 0;
    private static final int ENCODING = 1;
    private static final int ENCODED = 2;
    private static final int ABANDONED = 3;

    private final long fingerprint;
    private final MemorySegment identity;
    private final MemorySegment payload;
    private final int crc;
    private final int valueBytes;
    private final AtomicInteger state = new AtomicInteger(PENDING);

    /**
     * A value to write; computes the CRC32C now, on the caller's thread.
     *
     * @param fingerprint the layout fingerprint
     * @param identity    the block identity, at most {@link ValueFormat#MAX_IDENTITY_BYTES}
     * @param payload     the payload; the value fits in {@link ValueFormat#MAX_VALUE_BYTES}
     */
    BlockWrite(long fingerprint, MemorySegment identity, MemorySegment payload) {
        this.fingerprint = fingerprint;
        this.identity = identity;
        this.payload = payload;
        this.crc = ValueFormat.crc(identity, payload);
        this.valueBytes = ValueFormat.valueBytes(identity.byteSize(), payload.byteSize());
    }

    /** {@return the encoded length in bytes, header included} */
    int valueBytes() {
        return valueBytes;
    }

    /**
     * Writes the value (or, after {@link #abandon()}, a damaged value of the same length).
     * Called by Lettuce on the event loop: once, or again when it re-sends the command (a cluster
     * redirection, a replay after reconnecting), which writes the same bytes again.
     *
     * @param target the command buffer
     */
    void encode(ByteBuf target) {
        int s = state.get();
        if (s == ABANDONED || !state.compareAndSet(s, ENCODING)) {
            ValueFormat.writePoison(target, valueBytes);
            return;
        }
        try {
            ValueFormat.write(target, fingerprint, identity, payload, crc);
        } finally {
            state.set(ENCODED);
        }
    }

    /**
     * Gives up on this write: after it returns, the caller's segments are never read again.
     * Waits (spinning) while an encode is copying them.
     */
    void abandon() {
        while (true) {
            int s = state.get();
            if (s == ABANDONED || (s != ENCODING && state.compareAndSet(s, ABANDONED))) {
                return;
            }
            Thread.onSpinWait();
        }
    }
}
