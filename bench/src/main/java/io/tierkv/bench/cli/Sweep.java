package io.tierkv.bench.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The output of {@code tierkv replay --sweep}: one row per device capacity, written as CSV, and a
 * PNG plot of hit rate against capacity (log scale) with the infinite-capacity ceiling and, for
 * the two published Mooncake traces, the LRU curve of the Mooncake paper (FAST'25, Figure 9, values
 * read off the plot).
 */
public final class Sweep {

    /** CSV header. */
    public static final String CSV_HEADER = "capacity_tokens,capacity_blocks,hit_rate,ceiling_hit_rate,hit_tokens,"
            + "prompt_tokens,rejected_requests,device_hits,host_hits,disk_hits,demotions,promotions,evictions,"
            + "p50_us,p99_us,wall_s";

    /** Mooncake FAST'25 Figure 9, conversation trace (capacity in tokens, hit rate). */
    static final double[][] PAPER_CONVERSATION = {{1e4, 0.045}, {1e5, 0.07}, {1e6, 0.085}, {3e6, 0.165}, {1e7, 0.33},
        {5e7, 0.40}};
    /** Mooncake FAST'25 Figure 9, synthetic trace. */
    static final double[][] PAPER_SYNTHETIC = {{1e4, 0.0}, {1e5, 0.01}, {1e6, 0.15}, {3e6, 0.30}, {1e7, 0.59},
        {5e7, 0.66}};

    private Sweep() {
    }

    /**
     * One CSV row.
     *
     * @param r the report of one sweep point
     * @return the row, without a line end
     */
    public static String csvRow(ReplayReport r) {
        return String.format(Locale.ROOT, "%d,%d,%.6f,%.6f,%d,%d,%d,%d,%d,%d,%d,%d,%d,%.1f,%.1f,%.3f",
                r.setup().deviceTokens(), r.setup().deviceBlocks(), r.hitRate(), r.ceilingHitRate(), r.hitTokens(),
                r.promptTokens(), r.rejectedRequests(), r.hits().device(), r.hits().host(), r.hits().disk(),
                r.events().demotions(), r.events().promotions(), r.events().evictions(), r.matchPromote().p50(),
                r.matchPromote().p99(), r.wallSeconds());
    }

    /**
     * Writes the CSV.
     *
     * @param file    the file
     * @param reports one per capacity
     * @throws IOException if the file cannot be written
     */
    public static void writeCsv(Path file, List<ReplayReport> reports) throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add(CSV_HEADER);
        for (ReplayReport r : reports) {
            lines.add(csvRow(r));
        }
        Files.write(file, lines, StandardCharsets.UTF_8);
    }

    /**
     * The paper's curve for a trace file, if it is one of the two published Mooncake traces.
     *
     * @param source the trace's path
     * @return the points, or null
     */
    static double[][] paperCurve(String source) {
        String s = source.toLowerCase(Locale.ROOT);
        if (s.endsWith("conversation_trace.jsonl")) {
            return PAPER_CONVERSATION;
        }
        if (s.endsWith("synthetic_trace.jsonl")) {
            return PAPER_SYNTHETIC;
        }
        return null;
    }

    /**
     * Writes the PNG plot.
     *
     * @param file    the file
     * @param reports one per capacity, at least one
     * @throws IOException if the file cannot be written
     */
    public static void writePlot(Path file, List<ReplayReport> reports) throws IOException {
        System.setProperty("java.awt.headless", "true");
        ReplayReport first = reports.get(0);
        XYChart chart = new XYChartBuilder().width(900).height(560)
                .title("Prefix hit rate vs device capacity: " + Path.of(first.source()).getFileName())
                .xAxisTitle("device capacity (tokens, log scale)").yAxisTitle("token-weighted hit rate").build();
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisMax(1.0);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setYAxisDecimalPattern("0.00");
        int n = reports.size();
        double[] x = new double[n];
        double[] y = new double[n];
        double lo = Double.MAX_VALUE;
        double hi = 0;
        for (int i = 0; i < n; i++) {
            x[i] = Math.max(1, reports.get(i).setup().deviceTokens());
            y[i] = reports.get(i).hitRate();
            lo = Math.min(lo, x[i]);
            hi = Math.max(hi, x[i]);
        }
        ReplayReport.Setup s = first.setup();
        XYSeries replay = chart.addSeries("TierKV replay (" + s.policy() + (s.tiered() ? ", device of a tiered manager"
                : ", single tier") + ")", x, y);
        replay.setMarker(SeriesMarkers.CIRCLE);
        double ceiling = first.ceilingHitRate();
        XYSeries c = chart.addSeries(String.format(Locale.ROOT, "infinite-capacity ceiling (%.3f)", ceiling),
                new double[] {lo, hi}, new double[] {ceiling, ceiling});
        c.setMarker(SeriesMarkers.NONE);
        double[][] paper = paperCurve(first.source());
        if (paper != null) {
            double[] px = new double[paper.length];
            double[] py = new double[paper.length];
            for (int i = 0; i < paper.length; i++) {
                px[i] = paper[i][0];
                py[i] = paper[i][1];
            }
            XYSeries p = chart.addSeries("Mooncake FAST'25 Fig. 9, LRU (read off the plot)", px, py);
            p.setMarker(SeriesMarkers.DIAMOND);
        }
        try (OutputStream out = Files.newOutputStream(file)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
