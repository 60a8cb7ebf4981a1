package io.tierkv.bench.cli;

import io.tierkv.observe.Observation;
import java.io.PrintWriter;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * {@code tierkv replay --observe-ab}: the replay in pairs of one run without and one with
 * observation (on: KV events published and metrics served), each on a fresh manager, printing each
 * counted pair's on/off throughput ratio, its CPU time per token off/on, and the medians.
 *
 * <p>How the comparison is kept fair on a shared 2-core machine:
 * <ul>
 *   <li><b>Pairs.</b> A pair's two halves run back to back, so the machine's drift between pairs,
 *       larger than the effect, cancels within a pair.</li>
 *   <li><b>Alternating order.</b> On first in the first counted pair, off first in the second,
 *       and so on: with a fixed order, the second run of a pair was the slower one even with both
 *       runs unobserved (0.929, median of 7 pairs).</li>
 *   <li><b>Warm-up until the JIT settles.</b> Warm-up pairs (off, then on) run until neither half
 *       of a pair spent more than {@value #SETTLED_JIT_SHARE} of its process CPU time in the JIT
 *       compiler ({@link CompilationMXBean#getTotalCompilationTime}, the compiler threads' time),
 *       at most {@value #MAX_WARMUP_PAIRS} pairs. With one warm-up pair, the first counted run
 *       still spent 7.8 s of C2 compilation against 8.8 s of process CPU (2026-12-03), which
 *       charged that run, and its pair's ratio (0.706), for the JIT.</li>
 *   <li><b>CPU per token.</b> Beside throughput, each run's process CPU time per replayed token
 *       ({@code com.sun.management.OperatingSystemMXBean#getProcessCpuTime}): what observation
 *       costs in CPU, which other load on the machine moves less than it moves wall time.</li>
 * </ul>
 *
 * <p>Not thread-safe; one run per instance.
 */
final class ObserveAb {

    /** Most warm-up pairs. */
    static final int MAX_WARMUP_PAIRS = 10;
    /** The JIT's largest share of a run's CPU time for the warm-up to count as settled. */
    static final double SETTLED_JIT_SHARE = 0.02;

    private final int pairs;
    private final PrintWriter out;
    private final com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private final CompilationMXBean jit = ManagementFactory.getCompilationMXBean();

    /** One run's figures. */
    private record Half(ReplayReport report, double cpuNanosPerToken, double jitShare) {
    }

    /**
     * Creates the comparison.
     *
     * @param pairs counted pairs, >= 1
     * @param out   where the runs and the medians are printed
     */
    ObserveAb(int pairs, PrintWriter out) {
        this.pairs = pairs;
        this.out = out;
    }

    /**
     * Runs the warm-up and the counted pairs.
     *
     * @param replay  one replay on a fresh manager, observed by the given observation
     * @param opening opens the observation of an "on" run
     * @return 0, or 1 if a replay failed its checks ({@link ReplayCommand#failed})
     */
    int run(Function<Observation, ReplayReport> replay, Supplier<Observation> opening) {
        double[] ratios = new double[pairs];
        double[] cpuRatios = new double[pairs];
        int warmups = 0;
        boolean settled = false;
        while (!settled && warmups < MAX_WARMUP_PAIRS) {
            Half off = half(false, replay, opening, "(warm-up)");
            Half on = off == null ? null : half(true, replay, opening, "(warm-up)");
            if (on == null) {
                return 1;
            }
            warmups++;
            settled = off.jitShare() <= SETTLED_JIT_SHARE && on.jitShare() <= SETTLED_JIT_SHARE;
        }
        for (int pair = 0; pair < pairs; pair++) {
            boolean onFirst = pair % 2 == 0; // the warm-up's order (off, on), then on first, off first, ...
            Half first = half(onFirst, replay, opening, "");
            if (first == null) {
                return 1;
            }
            Half second = half(!onFirst, replay, opening, "");
            if (second == null) {
                return 1;
            }
            Half on = onFirst ? first : second;
            Half off = onFirst ? second : first;
            ratios[pair] = on.report().tokensPerSecond() / off.report().tokensPerSecond();
            cpuRatios[pair] = off.cpuNanosPerToken() / on.cpuNanosPerToken();
            out.printf(Locale.ROOT, "  pair %d: on/off %.3f, CPU per token off/on %.3f%n", pair + 1, ratios[pair],
                    cpuRatios[pair]);
            out.flush();
        }
        out.printf(Locale.ROOT, "observe A/B: on/off median %s of %d pairs; CPU per token off/on median %s; "
                + "%d warm-up pairs (JIT %s)%n", Medians.medianAndRange(ratios), pairs, Medians.medianAndRange(cpuRatios), warmups,
                settled ? "settled" : "not settled: the ratios include compilation");
        out.flush();
        return 0;
    }

    /**
     * One run, printed.
     *
     * @param note printed after the run's figures, or empty
     * @return its figures, or null if it failed its checks (its summary printed)
     */
    private Half half(boolean on, Function<Observation, ReplayReport> replay, Supplier<Observation> opening,
            String note) {
        try (Observation observation = on ? opening.get() : Observation.none()) {
            long cpuBefore = os.getProcessCpuTime();
            long jitBefore = jit.getTotalCompilationTime();
            ReplayReport r = replay.apply(observation);
            long cpuNanos = os.getProcessCpuTime() - cpuBefore;
            long jitMillis = jit.getTotalCompilationTime() - jitBefore;
            if (ReplayCommand.failed(r)) {
                out.print(r.summary());
                return null;
            }
            double tokens = r.tokensPerSecond() * r.wallSeconds();
            double jitShare = cpuNanos > 0 ? jitMillis * 1e6 / cpuNanos : 0;
            String events = observation.eventStats().map(e -> String.format(Locale.ROOT, ", %d KV events (%d dropped)",
                    e.queued(), e.dropped())).orElse("");
            out.printf(Locale.ROOT, "%-24s %.0f tokens/s, %.1f CPU ns/token, compiling %.1f%% of CPU time%s, hit rate "
                    + "%.4f%s%n", on ? "events and metrics on:" : "events and metrics off:", r.tokensPerSecond(),
                    cpuNanos / tokens, 100 * jitShare, events, r.hitRate(), note.isEmpty() ? "" : " " + note);
            out.flush();
            return new Half(r, cpuNanos / tokens, jitShare);
        }
    }
}
