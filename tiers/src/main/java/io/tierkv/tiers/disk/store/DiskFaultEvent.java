package io.tierkv.tiers.disk.store;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event: the disk tier found damaged bytes (a record that failed verification on read, or a
 * region, record or segment dropped during recovery). Visible with {@code jcmd <pid> JFR.start}
 * without extra code; cheap when recording is off.
 */
@Name("io.tierkv.DiskFault")
@Label("TierKV disk fault")
@Category({"TierKV", "Disk"})
@Description("A disk-tier record or segment failed verification and was dropped")
@StackTrace(false)
final class DiskFaultEvent extends jdk.jfr.Event {

    /** The damaged file. */
    @Label("File")
    String file;

    /** Byte offset of the damage in the file, or -1 for the whole file. */
    @Label("Offset")
    @Description("Byte offset in the file, or -1 for the whole file")
    long offset;

    /** What did not verify. */
    @Label("Reason")
    String reason;

    /** An event to fill in; {@link #emit} is the way to raise one. */
    DiskFaultEvent() {}

    /**
     * Commits an event if JFR records this event type.
     *
     * @param file   the damaged file
     * @param offset the offset, or -1
     * @param reason what did not verify
     */
    static void emit(String file, long offset, String reason) {
        DiskFaultEvent e = new DiskFaultEvent();
        if (e.isEnabled()) {
            e.file = file;
            e.offset = offset;
            e.reason = reason;
            e.commit();
        }
    }
}
