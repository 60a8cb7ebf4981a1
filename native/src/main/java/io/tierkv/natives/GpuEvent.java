package io.tierkv.natives;

/**
 * A point in a {@link GpuStream}: complete when all work queued before it has completed
 * ({@code hipEvent_t}, {@code cudaEvent_t}). Carries a completion time for
 * {@link #elapsedMillisSince(GpuEvent)}.
 *
 * <p>Lifetime: owned by the runtime; {@link #close()} releases it exactly once (a second close is
 * a no-op); other methods throw {@link IllegalStateException} after close. Thread-safety: safe to
 * query and wait on from any thread.
 */
public interface GpuEvent extends AutoCloseable {

    /**
     * Whether the work before this event has completed; does not block.
     *
     * @return true once complete
     * @throws GpuException if work before the event failed
     * @throws IllegalStateException if the event is closed
     */
    boolean isComplete();

    /**
     * Blocks until the work before this event has completed.
     *
     * @throws GpuException if work before the event failed
     * @throws IllegalStateException if the event is closed
     */
    void synchronize();

    /**
     * Milliseconds between {@code start} and this event, waiting for both to complete first. The
     * resolution is the runtime's (about 0.5 microseconds on HIP and CUDA, nanoTime on the
     * emulated device).
     *
     * @param start an earlier event of the same runtime
     * @return elapsed milliseconds (negative if {@code start} completed later)
     * @throws IllegalArgumentException if {@code start} belongs to another runtime, or either event
     *     was recorded without timing ({@link GpuStream#recordIfPending()}) where the runtime keeps none
     * @throws GpuException if the runtime cannot time the events
     * @throws IllegalStateException if either event is closed
     */
    float elapsedMillisSince(GpuEvent start);

    /**
     * Releases the event; a second call is a no-op.
     *
     * @throws GpuException if the runtime fails to destroy it
     */
    @Override
    void close();
}
