package io.tierkv.tiers.disk.store;

import io.tierkv.tiers.disk.DiskStats;
import java.nio.file.Path;
import java.util.StringJoiner;

/**
 * The disk tier's log of damaged bytes: once per kind, with a count, not once per record. The
 * first damage of each kind is logged at WARNING with where it was found; later ones of that kind
 * are only counted (in {@link DiskStats}: {@code corruptMisses}, {@code quarantined},
 * {@code recoveryFaults}, {@code droppedSegments}) and summed up in one line when the tier closes.
 * A flaky device or a damaged file can fail thousands of verifications, each already a counted
 * miss; a log line each would only bury the first. Every occurrence still raises its own JFR
 * {@code io.tierkv.DiskFault} event ({@link DiskFaultEvent}).
 *
 * <p>Not thread-safe: used under the disk tier's lock (and by recovery before the tier is shared).
 */
final class CorruptionLog {

    /** What was found damaged. */
    enum Kind {
        /** A record header that failed its checks on a read, match or put. */
        HEADER("record header damaged"),
        /** A record whose identity and payload failed their CRC32C. */
        PAYLOAD("payload checksum mismatch"),
        /** A record whose payload passed its checksum but did not decode. */
        DECODE("payload does not decode"),
        /** A record header that failed its checks during compaction. */
        COMPACTION("record header damaged, found by compaction"),
        /** Damaged or torn bytes skipped by recovery. */
        RECOVERY("damaged bytes skipped by recovery"),
        /** A segment whose header failed its checks at recovery, dropped whole. */
        SEGMENT("segment header damaged, segment dropped by recovery");

        private final String text;

        Kind(String text) {
            this.text = text;
        }
    }

    private final Path dir;
    private final System.Logger log;
    private final long[] counts = new long[Kind.values().length];

    /**
     * Creates the log of one tier, on the {@link DiskTier} logger.
     *
     * @param dir the tier's directory, named in the summary
     */
    CorruptionLog(Path dir) {
        this(dir, System.getLogger(DiskTier.class.getName()));
    }

    /**
     * Creates a log on a given logger.
     *
     * @param dir the tier's directory, named in the summary
     * @param log where the lines go
     */
    CorruptionLog(Path dir, System.Logger log) {
        this.dir = dir;
        this.log = log;
    }

    /**
     * Counts one damage; logs it if it is the first of its kind.
     *
     * @param kind   what was damaged
     * @param where  the file and offset, as text
     * @param detail the check that failed and what happens to the bytes
     */
    void found(Kind kind, String where, String detail) {
        if (counts[kind.ordinal()]++ == 0) {
            log.log(System.Logger.Level.WARNING, "disk tier: {0} at {1}: {2} (first of its kind: later ones are"
                    + " counted in DiskStats, not logged one by one, and summed up when the tier closes)", kind.text,
                    where, detail);
        }
    }

    /**
     * Damages of a kind found since the tier opened.
     *
     * @param kind the kind
     * @return the count
     */
    long count(Kind kind) {
        return counts[kind.ordinal()];
    }

    /** Logs one line with the count of every kind found, if any damage was found more than once. */
    void summary() {
        StringJoiner kinds = new StringJoiner(", ");
        boolean repeated = false;
        for (Kind k : Kind.values()) {
            if (counts[k.ordinal()] > 0) {
                kinds.add(k.text + " x " + counts[k.ordinal()]);
                repeated |= counts[k.ordinal()] > 1;
            }
        }
        if (repeated) {
            log.log(System.Logger.Level.WARNING, "disk tier {0}: damaged bytes found while it was open: {1}", dir,
                    kinds);
        }
    }
}
