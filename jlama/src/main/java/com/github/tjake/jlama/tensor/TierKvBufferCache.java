package com.github.tjake.jlama.tensor;

import com.github.tjake.jlama.model.AbstractModel;
import io.tierkv.core.cache.Sequence;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Jlama's KV cache replaced by TierKV: installed into a model's {@code kvBufferCache} field, it
 * answers {@link #getKvBuffer(UUID)} with the {@link TierKvBuffer} of a session opened through
 * {@link #open(UUID, Sequence)}. {@link #getEphemeralKvBuffer()} (embeddings, classification) stays
 * Jlama's own in-memory buffer. Thread-safe.
 */
public final class TierKvBufferCache extends KvBufferCache {

    private final ConcurrentMap<UUID, TierKvBuffer> buffers = new ConcurrentHashMap<>();

    /**
     * Creates the cache for a model.
     *
     * @param model the model whose KV it will hold
     */
    public TierKvBufferCache(AbstractModel model) {
        super(Objects.requireNonNull(model, "model"));
    }

    /**
     * Opens a session's buffer over a TierKV sequence.
     *
     * @param session  the session id Jlama will ask for
     * @param sequence the sequence that holds its KV (owned by the caller)
     * @return the buffer
     * @throws IllegalStateException if the session is open already
     */
    public TierKvBuffer open(UUID session, Sequence sequence) {
        TierKvBuffer b = new TierKvBuffer(this, session, sequence);
        if (buffers.putIfAbsent(session, b) != null) {
            throw new IllegalStateException("session " + session + " is open already");
        }
        return b;
    }

    /**
     * Forgets a session's buffer (after its owner disposed of it).
     *
     * @param session the session id
     */
    public void forget(UUID session) {
        buffers.remove(session);
    }

    /**
     * The buffer of a session opened through {@link #open(UUID, Sequence)}.
     *
     * @param session the session id
     * @return its buffer
     * @throws IllegalStateException if the session was not opened through TierKV (its token ids,
     *                               which block hashes need, would be unknown)
     */
    @Override
    public KvBuffer getKvBuffer(UUID session) {
        TierKvBuffer b = buffers.get(session);
        if (b == null) {
            throw new IllegalStateException("session " + session + " was not opened through TierKV "
                    + "(io.tierkv.jlama.TierKvJlama.openSession): TierKV needs each position's token id");
        }
        return b;
    }

    /** Closes every open session's lease; the sessions' owners close their sequences. */
    @Override
    public void close() {
        buffers.values().forEach(TierKvBuffer::release);
    }
}
