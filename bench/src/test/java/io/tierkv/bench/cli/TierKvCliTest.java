package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The {@code tierkv} command line end to end: options, summary, JSON report, sweep CSV and plot. */
class TierKvCliTest {

    /** Creates the test. */
    TierKvCliTest() {
    }

    /** What one command printed and returned. */
    private record Result(int status, String out, String err) {
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = TierKvCli.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int status = cl.execute(args);
        return new Result(status, out.toString(), err.toString());
    }

    /**
     * {@code --observe-ab} warms up in (off, on) pairs until the JIT has settled, then alternates
     * the order within its counted pairs (the second run of a pair is the slower one whatever it
     * does) and prints one throughput ratio and one CPU-per-token ratio per counted pair and
     * their medians.
     */
    @Test
    void observeAbWarmsUpThenAlternatesTheOrderWithinPairs() {
        Result r = run("replay", "--observe-ab", "--ab-pairs", "3", "--requests", "30", "--movers", "0");
        assertEquals(0, r.status(), r.err());
        List<String> runs = r.out().lines().filter(l -> l.startsWith("events and metrics")).toList();
        List<String> warmups = runs.stream().filter(l -> l.endsWith("(warm-up)")).map(TierKvCliTest::kind).toList();
        List<String> counted = runs.stream().filter(l -> !l.endsWith("(warm-up)")).map(TierKvCliTest::kind).toList();
        assertTrue(warmups.size() >= 2 && warmups.size() <= 2 * ObserveAb.MAX_WARMUP_PAIRS, r.out());
        for (int i = 0; i < warmups.size(); i++) {
            assertEquals(i % 2 == 0 ? "off" : "on", warmups.get(i), r.out());
        }
        assertEquals(List.of("on", "off", "off", "on", "on", "off"), counted, r.out());
        assertEquals(3, r.out().lines().filter(l -> l.matches("  pair [123]: on/off [0-9.]+, CPU per token off/on [0-9.]+"))
                .count(), r.out());
        assertTrue(r.out().contains("observe A/B: on/off median "), r.out());
        assertTrue(r.out().contains("; CPU per token off/on median "), r.out());
        int warmupPairs = warmups.size() / 2;
        assertTrue(r.out().contains("; " + warmupPairs + " warm-up pairs (JIT "), r.out());
        runs.forEach(l -> {
            assertEquals(kind(l).equals("on"), l.matches(".*, [1-9][0-9]* KV events \\([0-9]+ dropped\\).*"), l);
            double nanos = Double.parseDouble(l.replaceAll(".* tokens/s, ([0-9.]+) CPU ns/token.*", "$1"));
            assertTrue(nanos > 0, l); // the process's CPU time over the run, per token replayed
        });
    }

    /** {@return "on" or "off": a printed run's kind} */
    private static String kind(String line) {
        return line.startsWith("events and metrics on:") ? "on" : "off";
    }

    /** The top command lists its subcommands. */
    @Test
    void helpListsCommands() {
        Result r = run("--help");
        assertEquals(0, r.status());
        for (String c : List.of("replay", "decode", "simulate")) {
            assertTrue(r.out().contains(c), r.out());
        }
    }

    /**
     * A small generator replay through three tiers writes a JSON report whose fields add up.
     *
     * @param dir a temporary directory
     * @throws Exception on failure
     */
    @Test
    void replayWritesReport(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("report.json");
        Result r = run("replay", "--requests", "120", "--movers", "0", "--device-tokens", "8192", "--host-tokens",
                "16384", "--disk-bytes", "32m", "--disk-dir", dir.resolve("disk").toString(), "--report",
                json.toString(), "--no-progress");
        assertEquals(0, r.status(), r.err());
        assertTrue(r.out().contains("hit rate:"), r.out());
        JsonNode report = new ObjectMapper().readTree(json.toFile());
        assertEquals(120, report.get("requests").asLong());
        assertEquals("generator", report.get("format").asText());
        assertEquals(64, report.get("setup").get("blockTokens").asInt());
        assertTrue(report.get("setup").get("tiered").asBoolean());
        long hit = report.get("hitTokens").asLong();
        long prompt = report.get("promptTokens").asLong();
        assertEquals((double) hit / prompt, report.get("hitRate").asDouble(), 1e-12);
        JsonNode hits = report.get("hits");
        assertEquals(hits.get("matchedBlocks").asLong(), hits.get("device").asLong() + hits.get("host").asLong()
                + hits.get("disk").asLong());
        assertEquals(0, report.get("events").get("verifyFailures").asLong());
        assertEquals(0, report.get("invariantViolations").size());
        assertTrue(report.get("matchPromote").get("count").asLong() == 120);
    }

    /**
     * A sweep writes one CSV row per capacity and a PNG, with hit rates that grow with capacity.
     *
     * @param dir a temporary directory
     * @throws Exception on failure
     */
    @Test
    void sweepWritesCsvAndPlot(@TempDir Path dir) throws Exception {
        Path csv = dir.resolve("sweep.csv");
        Path png = dir.resolve("sweep.png");
        Result r = run("replay", "--requests", "150", "--single-tier", "--payload", "none", "--sweep",
                "4096,32768,1e6", "--sweep-csv", csv.toString(), "--plot", png.toString(), "--no-progress");
        assertEquals(0, r.status(), r.err());
        List<String> lines = Files.readAllLines(csv);
        assertEquals(Sweep.CSV_HEADER, lines.get(0));
        assertEquals(4, lines.size());
        double[] rates = lines.stream().skip(1).mapToDouble(l -> Double.parseDouble(l.split(",")[2])).toArray();
        assertTrue(rates[0] <= rates[1] && rates[1] <= rates[2], Arrays.toString(rates));
        double ceiling = Double.parseDouble(lines.get(3).split(",")[3]);
        assertEquals(ceiling, rates[2], 0.0, "1e6 tokens hold the whole working set");
        byte[] magic = Arrays.copyOf(Files.readAllBytes(png), 8);
        assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, magic);
    }

    /** A bad option value exits with status 2 and names the field. */
    @Test
    void badLayoutIsAUsageError() {
        Result r = run("replay", "--layout", "gpt-9", "--requests", "1");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("layout"), r.err());
    }
}
