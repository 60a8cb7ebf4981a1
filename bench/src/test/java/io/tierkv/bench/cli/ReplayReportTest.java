package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The replay summary's figures say what they count. */
class ReplayReportTest {

    private static ReplayReport report(long evictions, long hostEvictions, long diskEvictions) {
        return report(evictions, hostEvictions, diskEvictions, 0, 0);
    }

    private static ReplayReport report(long evictions, long hostEvictions, long diskEvictions, long lost,
            long corruptRecords) {
        ReplayReport.Move none = new ReplayReport.Move(0, 0);
        ReplayReport.Latency latency = new ReplayReport.Latency(0, 0, 0, 0, 0, 0, 0);
        return new ReplayReport("synthetic", "generator", 16,
                new ReplayReport.Setup("L2", 16, 2048, true, 4, 64, 4, 1 << 20, "LZ4", "lru", "full", 0, 0, -1, 0),
                10, 0, null, 100, 50, 0.5, 0.6, 50, 0, new ReplayReport.Hits(3, 1, 1, 1, lost),
                new ReplayReport.Moves(none, none, none, none, 0, 0),
                new ReplayReport.Events(5, 2, 0, 0, evictions, hostEvictions, diskEvictions, 0, 0, 40, 0, 0, 0,
                        corruptRecords, 1.0),
                latency, 1.0, 10.0, 100.0, List.of(), null);
    }

    @Test
    void theEvictionLineCallsNoFigureATotalThatOneOfItsPartsExceeds() {
        String line = report(2, 1, 40).summary().lines().filter(l -> l.startsWith("evictions:")).findFirst()
                .orElseThrow();
        assertFalse(line.contains("total"), line);
        assertTrue(line.contains("2 blocks freed (host full 1 of them); disk budget dropped 40 records"), line);
    }

    @Test
    void aLostBlockThatNoDamagedRecordExplainsFailsTheReplay() {
        assertFalse(ReplayCommand.failed(report(0, 0, 0, 0, 0)));
        assertTrue(ReplayCommand.failed(report(0, 0, 0, 1, 0)), "lost with nothing found damaged");
        assertFalse(ReplayCommand.failed(report(0, 0, 0, 2, 2)), "each explained by a damaged record");
        assertTrue(ReplayCommand.failed(report(0, 0, 0, 3, 2)));
        String hits = report(0, 0, 0, 1, 0).summary().lines().filter(l -> l.startsWith("hits by tier:")).findFirst()
                .orElseThrow();
        assertTrue(hits.contains("1 lost, NOT EXPLAINED by the 0 damaged disk records found"), hits);
    }
}
