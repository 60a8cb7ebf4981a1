package io.tierkv.natives;

import io.tierkv.natives.emulated.CopyQueue;

/**
 * The marker task of a timed event of the emulated device ({@link GpuStream#record()}): stamps
 * {@link System#nanoTime()} when its stream reaches it. Written by the stream's worker, read by the
 * event's owner once the queue has passed it.
 */
final class TimeStamp implements CopyQueue.Task {

    /** When the stream reached this marker; 0 until then. */
    volatile long nanos;

    @Override
    public void run() {
        nanos = System.nanoTime();
    }

    @Override
    public boolean isMarker() {
        return true;
    }
}
