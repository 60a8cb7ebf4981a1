package io.tierkv.jlama;

import com.github.tjake.jlama.tensor.TierKvBuffer;
import io.tierkv.core.cache.CacheStats;
import io.tierkv.core.cache.Sequence;
import io.tierkv.tiers.TierStats;
import java.util.Objects;
import java.util.UUID;
import java.util.function.IntConsumer;

/**
 * One Jlama session whose KV lives in a TierKV {@link Sequence}. {@link #generate} takes the
 * prompt's full blocks that are cached in any tier (from any session with the same salt and extra
 * keys, or recovered from a persistent disk tier) with {@link Sequence#matchPrefix(int[], int)},
 * runs Jlama's {@code batchForward} (or {@code forward} per position, {@link Prefill}) over the rest
 * from the cached length, then {@code forward}
 * per generated token. Each step leases the blocks it attends over (promoting any that were
 * demoted), so Jlama reads them in place on the device; between steps TierKV may demote and spill
 * them under its budgets. One generation per session; closing it keeps its sealed blocks cached.
 * One thread drives a session; sessions on other threads take turns with it step by step (the
 * adapter's forward lock), and {@link #close()} from another thread waits for the step in flight.
 */
public final class JlamaSession implements AutoCloseable {

    private final TierKvJlama owner;
    private final UUID id;
    private final Sequence sequence;
    private final TierKvBuffer buffer;
    private boolean used;
    private volatile boolean closed;

    JlamaSession(TierKvJlama owner, UUID id, Sequence sequence) {
        this.owner = owner;
        this.id = id;
        this.sequence = sequence;
        TierKvBuffer b;
        try {
            b = owner.cache().open(id, sequence);
        } catch (RuntimeException e) {
            sequence.close();
            throw e;
        }
        this.buffer = b;
    }

    /** {@return the session id Jlama knows it by} */
    public UUID id() {
        return id;
    }

    /** {@return the TierKV sequence holding the session's KV} */
    public Sequence sequence() {
        return sequence;
    }

    /**
     * Generates {@code steps} tokens greedily after {@code prompt}, without logits.
     *
     * @param prompt the prompt's token ids
     * @param steps  tokens to generate, at least one
     * @return the generation
     * @see #generate(int[], int, boolean)
     */
    public Generation generate(int[] prompt, int steps) {
        return generate(prompt, steps, false);
    }

    /**
     * Generates {@code steps} tokens greedily after {@code prompt}: cached full blocks of the
     * prompt are taken (at most {@code prompt.length - 1} tokens, so the last prompt position is
     * always computed for its logits), the rest is computed.
     *
     * @param prompt     the prompt's token ids, at least one
     * @param steps      tokens to generate, at least one; prompt + steps - 1 within the model's context
     * @param keepLogits whether to keep the logits of every step
     * @return the generation, with the cached tokens and where their blocks came from
     * @throws IllegalArgumentException if the prompt or steps are empty or exceed the context
     * @throws IllegalStateException    if this session generated already or is closed
     * @throws io.tierkv.core.error.CapacityExhaustedException if the device cannot hold the blocks
     *                                  a step attends over
     */
    public Generation generate(int[] prompt, int steps, boolean keepLogits) {
        return generate(prompt, steps, Prefill.BATCHED, keepLogits, length -> { });
    }

    /**
     * Generates as {@link #generate(int[], int, boolean)} with the given prefill, calling {@code betweenSteps} after every
     * forward step with the sequence length, when no block of the session is leased: the point
     * where a scheduler may run other sessions or move blocks (the tests and {@code tierkv jlama}
     * demote and spill every block there, so each step promotes them back).
     *
     * @param prompt       the prompt's token ids, at least one
     * @param steps        tokens to generate, at least one
     * @param prefill      how the uncached rest of the prompt is computed (see {@link Prefill})
     * @param keepLogits   whether to keep the logits of every step
     * @param betweenSteps called with the sequence length after each step
     * @return the generation
     * @throws IllegalArgumentException as {@link #generate(int[], int, boolean)}
     * @throws IllegalStateException    as {@link #generate(int[], int, boolean)}
     */
    public Generation generate(int[] prompt, int steps, Prefill prefill, boolean keepLogits,
            IntConsumer betweenSteps) {
        Objects.requireNonNull(prompt, "prompt");
        Objects.requireNonNull(prefill, "prefill");
        Objects.requireNonNull(betweenSteps, "betweenSteps");
        if (closed) {
            throw new IllegalStateException("session " + id + " is closed");
        }
        if (used) {
            throw new IllegalStateException("session " + id + " generated already (one generation per session)");
        }
        Decoder.checkLengths(owner.model(), prompt.length, steps); // before anything is taken: a refused call uses nothing
        used = true;
        long t0 = System.nanoTime();
        java.util.concurrent.locks.ReentrantLock lock = owner.forwardLock;
        lock.lock(); // held from the match to the first step's end: the prefix hits counted are this session's
        try {
            checkOpen();
            TierStats s0 = owner.manager().stats();
            int cached = sequence.matchPrefix(prompt, prompt.length - 1);
            PrefixHits[] hits = {PrefixHits.NONE};
            boolean[] first = {true};
            Decoder.Steps steps0 = new Decoder.Steps() {
                @Override
                public void before(int[] tokens, int from, int to) {
                    if (!lock.isHeldByCurrentThread()) {
                        lock.lock(); // one forward step of one session at a time
                    }
                    checkOpen();
                    for (int t : tokens) {
                        sequence.appendToken(t);
                    }
                    buffer.attend(to);
                    if (first[0]) {
                        first[0] = false;
                        hits[0] = hits(s0, owner.manager().stats());
                    }
                }

                @Override
                public void after(int from, int to) {
                    buffer.written(from, to);
                    buffer.setCurrentContextPosition(to);
                    buffer.release();
                    lock.unlock();
                    betweenSteps.accept(to);
                }
            };
            return Decoder.run(owner.model(), buffer, steps0, prompt.clone(), cached, steps, prefill, keepLogits, t0,
                    () -> hits[0]);
        } finally {
            if (!lock.isHeldByCurrentThread()) {
                lock.lock();
            }
            try {
                buffer.release();
            } finally {
                while (lock.isHeldByCurrentThread()) {
                    lock.unlock();
                }
            }
        }
    }

    /** Throws if this session was closed, by this thread or (between two steps) by another. */
    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("session " + id + " is closed");
        }
    }

    /** Cached blocks by tier, from the stats around the match and the first lease (as tierkv replay counts them, plus disk records read up to the host). */
    private static PrefixHits hits(TierStats before, TierStats after) {
        CacheStats a = after.cache();
        CacheStats b = before.cache();
        long all = a.prefixHitBlocks() - b.prefixHitBlocks();
        long below = a.prefixHitBlocksBelow() - b.prefixHitBlocksBelow();
        long disk = Math.min(below, after.diskLoads().blocks() - before.diskLoads().blocks()
                + after.diskToHost().blocks() - before.diskToHost().blocks());
        return new PrefixHits(all - below, below - disk, disk);
    }

    /**
     * Releases the KV buffer and closes the sequence (sealed blocks stay cached), after the forward
     * step in flight, if another thread is generating; that thread's next step then throws
     * "session ... is closed". Idempotent.
     */
    @Override
    public void close() {
        owner.forwardLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            try {
                buffer.dispose();
                owner.cache().forget(id);
            } finally {
                sequence.close();
                owner.closed(this);
            }
        } finally {
            owner.forwardLock.unlock();
        }
    }
}
