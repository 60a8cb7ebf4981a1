package io.tierkv.tiers;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * JFR events of the tier manager, visible with {@code jcmd <pid> JFR.start} and no extra code.
 * Each is committed only when recording is enabled for it.
 */
final class TierEvents {

    private TierEvents() {
    }

    /** A block moved between tiers. */
    @Name("io.tierkv.TierMove")
    @Label("TierKV tier move")
    @Category({"TierKV"})
    static final class Move extends Event {
        @Label("Direction")
        String direction;
        @Label("Block id")
        int blockId;
        @Label("Bytes")
        @DataAmount
        long bytes;
    }

    /** The pressure mode changed. */
    @Name("io.tierkv.PressureMode")
    @Label("TierKV pressure mode change")
    @Category({"TierKV"})
    static final class Mode extends Event {
        @Label("From")
        String from;
        @Label("To")
        String to;
        @Label("Device utilisation")
        double utilisation;
    }

    /** A fault: a lost block, a failed spill, a mover error. */
    @Name("io.tierkv.TierFault")
    @Label("TierKV fault")
    @Category({"TierKV"})
    static final class Fault extends Event {
        @Label("What")
        String what;
    }

    static void move(String direction, int blockId, long bytes) {
        Move e = new Move();
        if (e.isEnabled()) {
            e.direction = direction;
            e.blockId = blockId;
            e.bytes = bytes;
            e.commit();
        }
    }

    static void fault(String what) {
        Fault e = new Fault();
        if (e.isEnabled()) {
            e.what = what;
            e.commit();
        }
    }
}
