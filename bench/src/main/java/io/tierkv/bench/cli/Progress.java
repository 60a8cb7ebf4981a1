package io.tierkv.bench.cli;

import java.io.PrintStream;
import java.util.Locale;

/**
 * A one-line progress bar on a terminal stream ({@code stderr}), redrawn at most every 200 ms with
 * a carriage return: {@code [=========>          ] 45.0%  5400/12031 req  1234 req/s  hit 0.381}.
 * A disabled bar prints nothing. Not thread-safe.
 */
public final class Progress implements AutoCloseable {

    private static final int WIDTH = 30;
    private static final long INTERVAL_NANOS = 200_000_000L;

    private final PrintStream out;
    private final long total;
    private final boolean enabled;
    private final String label;
    private final long start = System.nanoTime();
    private long lastDraw;
    private boolean drawn;

    /**
     * Creates a bar.
     *
     * @param out     where to draw (normally {@code System.err})
     * @param total   the count at 100%
     * @param enabled false for a bar that prints nothing
     * @param label   a prefix, for example the sweep point
     */
    public Progress(PrintStream out, long total, boolean enabled, String label) {
        this.out = out;
        this.total = Math.max(1, total);
        this.enabled = enabled;
        this.label = label;
    }

    /**
     * A bar that prints nothing.
     *
     * @return the bar
     */
    public static Progress none() {
        return new Progress(System.err, 1, false, "");
    }

    /**
     * Reports progress; draws when the last draw is older than 200 ms.
     *
     * @param done    items done
     * @param hitRate the hit rate so far
     */
    public void update(long done, double hitRate) {
        if (!enabled) {
            return;
        }
        long now = System.nanoTime();
        if (done < total && now - lastDraw < INTERVAL_NANOS) {
            return;
        }
        lastDraw = now;
        double f = Math.min(1.0, (double) done / total);
        int bar = (int) Math.round(f * WIDTH);
        StringBuilder b = new StringBuilder("\r").append(label).append('[');
        for (int i = 0; i < WIDTH; i++) {
            b.append(i < bar ? '=' : i == bar ? '>' : ' ');
        }
        double secs = (now - start) / 1e9;
        b.append(String.format(Locale.ROOT, "] %5.1f%%  %d/%d req  %.0f req/s  hit %.3f ", f * 100, done, total,
                secs > 0 ? done / secs : 0.0, hitRate));
        out.print(b);
        out.flush();
        drawn = true;
    }

    /** Ends the line if anything was drawn. */
    @Override
    public void close() {
        if (enabled && drawn) {
            out.println();
            out.flush();
        }
    }
}
