package io.tierkv.remote;

import io.lettuce.core.output.CommandOutput;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The output of one {@code GET}: verifies the value in Lettuce's receive buffer
 * ({@link ValueFormat#check}) and copies the payload straight into the caller's destination, with
 * no {@code byte[]} in between. Runs on the Netty event loop.
 *
 * <p>The caller's identity and destination are touched only between the event loop claiming the
 * read and finishing it, and never after {@link #abandon()} returned: a caller whose read timed out
 * calls it, and either wins (a late reply is then dropped unread) or waits for a copy in progress.
 * So a timed-out read never writes into memory its caller has reused.
 *
 * <p>A key that holds another type than a string answers {@code WRONGTYPE}: that completes
 * the read as {@link ReadOutcome#DAMAGED}, not as a failed command ({@link #setError(String)}).
 *
 * <p>Thread-safe: the state is one atomic integer; the outcome is published by Lettuce's future.
 */
final class BlockReadOutput extends CommandOutput<RemoteKey, RemoteValue, ReadOutcome> {

    private static final int PENDING = 0;
    private static final int READING = 1;
    private static final int DONE = 2;
    private static final int ABANDONED = 3;

    /** Prefix of the server's error for a command on a key of another type. */
    static final String WRONG_TYPE = "WRONGTYPE";

    private final long fingerprint;
    private final MemorySegment identity;
    private final MemorySegment dst;
    private final AtomicInteger state = new AtomicInteger(PENDING);

    /**
     * An output for one verified read.
     *
     * @param codec       the store's codec (unused for decoding; Lettuce requires one)
     * @param fingerprint the reader's layout fingerprint
     * @param identity    the identity the reader expects
     * @param dst         where the payload goes; its size is the payload length expected
     */
    BlockReadOutput(RemoteCodec codec, long fingerprint, MemorySegment identity, MemorySegment dst) {
        super(codec, ReadOutcome.ABSENT);
        this.fingerprint = fingerprint;
        this.identity = identity;
        this.dst = dst;
    }

    /**
     * The value's bytes (null for a missing key). Called by Lettuce.
     *
     * @param bytes the value in Lettuce's buffer, valid only during this call
     */
    @Override
    public void set(ByteBuffer bytes) {
        if (bytes == null || !state.compareAndSet(PENDING, READING)) {
            return;
        }
        try {
            MemorySegment value = MemorySegment.ofBuffer(bytes);
            ReadOutcome outcome = ValueFormat.check(value, fingerprint, identity, dst.byteSize());
            if (outcome == ReadOutcome.HIT) {
                MemorySegment.copy(value, ValueFormat.payloadOffset(value), dst, 0, dst.byteSize());
            }
            output = outcome;
        } finally {
            state.set(DONE);
        }
    }

    /**
     * An error reply, decoded. Called by Lettuce.
     *
     * @param error the error's text, in Lettuce's buffer
     */
    @Override
    public void setError(ByteBuffer error) {
        setError(decodeString(error));
    }

    /**
     * An error reply. {@code WRONGTYPE} means the key holds a list, set, hash or other non-string
     * value, which no TierKV writer stores: that is a damaged value ({@link ReadOutcome#DAMAGED},
     * deleted by the store, as a damaged string is), and the command completes normally with that
     * outcome. Any other error fails the command. The caller's memory is not touched either way.
     *
     * @param error the error's text
     */
    @Override
    public void setError(String error) {
        if (error != null && error.startsWith(WRONG_TYPE)) {
            output = ReadOutcome.DAMAGED;
            return;
        }
        super.setError(error);
    }

    /**
     * Gives up on this read: after it returns the caller's segments are never touched again.
     * Waits (spinning) while a verification and copy are in progress.
     */
    void abandon() {
        if (state.compareAndSet(PENDING, ABANDONED)) {
            return;
        }
        while (state.get() == READING) {
            Thread.onSpinWait();
        }
    }
}
