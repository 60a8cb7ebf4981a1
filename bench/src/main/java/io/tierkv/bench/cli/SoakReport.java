package io.tierkv.bench.cli;

import io.tierkv.core.cache.CacheStats;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The end of a soak: its summary, the faults found and the exit status. What counts as a fault is
 * listed in {@link SoakCommand}'s javadoc; {@link #faults()} is that list, checked.
 *
 * @param tally        what the run counted
 * @param seconds      how long the run took, seconds
 * @param duration     {@code --duration} as typed
 * @param interrupted  whether an interrupt (Ctrl-C) ended the run early
 * @param corruptRate  {@code --corrupt-rate}, 0 when off
 * @param injected     disk records damaged by the fault injection, 0 without it
 * @param leaked       blocks leaked at the end ({@link SoakChecks#leakedBlocks})
 * @param endCache     the last manager's cache stats once every sequence was closed
 * @param fdStart      open file descriptors at the start, -1 where unknown
 * @param fdEnd        open file descriptors at the end, after the cleanup
 * @param fdTolerance  {@code --fd-tolerance}
 * @param diskBudget   the disk tier's budget, bytes
 */
record SoakReport(SoakTally tally, double seconds, String duration, boolean interrupted, double corruptRate,
        long injected, long leaked, CacheStats endCache, int fdStart, int fdEnd, int fdTolerance, long diskBudget) {

    /**
     * The faults found, each a short phrase for the result line; empty when the soak passed.
     *
     * @return the faults, in the order the result line gives them
     */
    List<String> faults() {
        SoakTally t = tally;
        List<String> faults = new ArrayList<>();
        if (t.mismatches.sum() > 0) {
            faults.add(t.mismatches.sum() + " mismatches");
        }
        if (t.invariantViolations > 0) {
            faults.add(t.invariantViolations + " invariant violations");
        }
        if (leaked != 0) {
            faults.add(leaked + " leaked blocks");
        }
        if (t.corruptMisses != injected) {
            faults.add(injected + " corruptions injected but " + t.corruptMisses + " detected");
        }
        if ((t.lostBlocks > 0 || t.lostBelow.sum() > 0) && t.corruptMisses == 0) {
            faults.add(Math.max(t.lostBlocks, t.lostBelow.sum()) + " blocks lost below with no detected corruption to "
                    + "explain them");
        }
        if (fdEnd - fdStart > fdTolerance) {
            faults.add("file descriptors grew by " + (fdEnd - fdStart));
        }
        if (t.peakDiskBytes.get() > diskBudget) {
            faults.add("disk peak above budget");
        }
        if (!t.unexpected.isEmpty()) {
            faults.add(t.unexpected.size() + " unexpected exceptions");
        }
        if (t.operations() == 0) {
            faults.add("no operation completed");
        }
        return faults;
    }

    /**
     * Prints the summary and the result line.
     *
     * @param out where to print
     * @return the exit status: 0 no fault, 1 a fault
     */
    int print(PrintWriter out) {
        SoakTally t = tally;
        long ops = t.operations();
        if (interrupted) {
            out.printf(Locale.ROOT, "interrupted after %.1f s of %s: partial summary%n", seconds, duration);
        }
        out.printf(Locale.ROOT, "ran %.1f s%n", seconds);
        out.printf(Locale.ROOT, "operations: %d (%.0f/s): requests %d, appends %d, leases %d, forks %d, closes %d, "
                + "restarts %d%n", ops, ops / seconds, t.requests.sum(), t.appends.sum(), t.leases.sum(),
                t.forks.sum(), t.closes.sum(), t.restarts);
        out.printf(Locale.ROOT, "back-pressure (not faults): %d operations without device room in time, %d mover "
                + "back-pressure errors%n", t.backPressure.sum(), t.moverBackPressure.sum());
        out.printf(Locale.ROOT, "corruption: %d records damaged by injection (rate %s), %d detected (disk corrupt "
                + "misses), %d damaged regions skipped by recovery at restarts%n", injected,
                corruptRate > 0 ? Double.toString(corruptRate) : "0: off", t.corruptMisses, t.recoveryFaults);
        out.printf(Locale.ROOT, "blocks lost below: %d (referenced blocks whose only copy was found damaged; %d "
                + "leases or reads failed with CorruptBlockException and the runtime recomputed them)%n", t.lostBlocks,
                t.lostBelow.sum());
        out.printf(Locale.ROOT, "prefix hits: %d blocks (%d below the device), %d tokens matched; disk: %d adoptions, "
                + "%d blocks recovered at restarts, %d misses%n", t.prefixHits, t.prefixHitsBelow,
                t.matchedTokens.sum(), t.diskAdoptions, t.recoveredBlocks, t.diskMisses);
        long[] m = t.moved;
        out.printf(Locale.ROOT, "bytes moved: demotions %s (%d blocks), promotions %s (%d), disk spills %s (%d), "
                + "disk loads %s (%d)%n", Sizes.bytes(m[0]), m[1], Sizes.bytes(m[2]), m[3], Sizes.bytes(m[4]), m[5],
                Sizes.bytes(m[6]), m[7]);
        out.printf(Locale.ROOT, "bytes verified: %s%n", Sizes.bytes(t.verifiedBytes.sum()));
        out.printf(Locale.ROOT, "mismatches: %d%n", t.mismatches.sum());
        for (String s : t.mismatchSamples) {
            out.println("  " + s);
        }
        out.printf(Locale.ROOT, "invariant checks: %d, violations %d (each check one atomic snapshot of the block "
                + "model and the tiers below; no re-check)%n", t.invariantChecks, t.invariantViolations);
        for (String s : t.violationSamples) {
            out.println("  " + s);
        }
        out.printf(Locale.ROOT, "leaked blocks: %d (live block ids minus cached blocks and blocks a read-ahead holds, "
                + "after every sequence closed, one snapshot; live %d, cached %d, read-ahead %d)%n", leaked,
                endCache.liveBlocks(), endCache.cachedBlocks(), endCache.leasedOnlyBlocks());
        out.printf(Locale.ROOT, "open file descriptors: start %d, end %d (tolerance +%d)%n", fdStart, fdEnd,
                fdTolerance);
        out.printf(Locale.ROOT, "disk peak: %s of budget %s (%.1f%%)%n", Sizes.bytes(t.peakDiskBytes.get()),
                Sizes.bytes(diskBudget), 100.0 * t.peakDiskBytes.get() / diskBudget);
        out.printf(Locale.ROOT, "unexpected exceptions: %d%n", t.unexpected.size());
        int shown = 0;
        for (Throwable e : t.unexpected) {
            if (shown++ == 3) {
                break;
            }
            out.println("  " + stackTop(e));
        }
        List<String> faults = faults();
        out.println(faults.isEmpty() ? "result: PASS" : "result: FAIL (" + String.join(", ", faults) + ")");
        out.flush();
        return faults.isEmpty() ? 0 : 1;
    }

    private static String stackTop(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            sb.append(c).append(c.getStackTrace().length > 0 ? " at " + c.getStackTrace()[0] : "");
            if (c.getCause() != null) {
                sb.append(" <- ");
            }
        }
        return sb.toString();
    }
}
