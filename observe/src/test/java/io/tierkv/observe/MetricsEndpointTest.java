package io.tierkv.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.MovePath;
import io.tierkv.tiers.TierStats;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A scrape of /metrics parses under the Prometheus text format and its values equal stats(). */
class MetricsEndpointTest {

    @TempDir
    Path dir;

    private static final Pattern SAMPLE = Pattern.compile(
            "([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{((?:[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\]|\\\\.)*\",?)*)\\})? "
                    + "(-?[0-9.eE+-]+|NaN|[+-]Inf)( -?[0-9]+)?");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final Pattern TYPE = Pattern.compile("# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|summary|histogram|untyped)");

    @Test
    void scrapeParsesAsPrometheusTextAndEqualsStats() throws Exception {
        try (KvBlockManager kv = Workload.manager(KvBlockManager.builder(Workload.LAYOUT).kvEvents(b -> { }), dir.resolve("kv"));
             MetricsEndpoint endpoint = new MetricsEndpoint(new TierKvMetrics(kv::stats, kv::kvEventStats), 0)) {
            Workload.run(kv, 5, 200);
            while (kv.kvEventStats().orElseThrow().depth() > 0) {
                Thread.sleep(10);
            }
            Thread.sleep(100); // the event thread's last batch
            Map<String, Double> m = parse(scrape(endpoint.port()));
            TierStats s = kv.stats();
            assertEquals(s.demotions().blocks(), m.get("tierkv_move_blocks_total{direction=d2h}"));
            assertEquals(s.demotions().bytes(), m.get("tierkv_move_bytes_total{direction=d2h}"));
            assertEquals(s.promotions().blocks(), m.get("tierkv_move_blocks_total{direction=h2d}"));
            assertEquals(s.diskSpills().blocks(), m.get("tierkv_move_blocks_total{direction=h2disk}"));
            assertEquals(s.diskLoads().blocks(), m.get("tierkv_move_blocks_total{direction=disk2d}"));
            assertEquals(s.diskToHost().bytes(), m.get("tierkv_move_bytes_total{direction=disk2h}"));
            assertEquals(s.demotions().p99Nanos() / 1e9, m.get("tierkv_move_latency_seconds{direction=d2h,quantile=0.99}"), 1e-12);
            assertEquals(s.cache().prefixHitBlocksBelow(), m.get("tierkv_lookup_blocks_total{result=hit,tier=below}"));
            assertEquals(s.cache().prefixHitBlocks() - s.cache().prefixHitBlocksBelow(),
                    m.get("tierkv_lookup_blocks_total{result=hit,tier=gpu}"));
            assertEquals(s.cache().prefixMissBlocks(), m.get("tierkv_lookup_blocks_total{result=miss,tier=none}"));
            assertEquals(s.cache().deviceUsedBlocks(), m.get("tierkv_usage_blocks{tier=gpu}"));
            assertEquals(s.hostUsedBlocks(), m.get("tierkv_usage_blocks{tier=cpu}"));
            assertEquals(s.disk().blockCount(), m.get("tierkv_usage_blocks{tier=disk}"));
            assertEquals(s.hostCapacityBlocks(), m.get("tierkv_capacity_blocks{tier=cpu}"));
            assertEquals(s.disk().usedBytes(), m.get("tierkv_disk_used_bytes"));
            assertEquals(s.disk().evictions(), m.get("tierkv_evictions_total{cause=evict,tier=disk}"));
            assertEquals(s.hostCleanDrops(), m.get("tierkv_evictions_total{cause=clean_drop,tier=cpu}"));
            assertEquals(s.cache().cleanDrops(), m.get("tierkv_evictions_total{cause=clean_drop,tier=gpu}"));
            assertEquals(s.diskSpillFailures(), m.get("tierkv_failures_total{kind=disk_spill}"));
            assertEquals(s.queues().get(MovePath.DEVICE_TO_HOST).rejected(),
                    m.get("tierkv_queue_rejected_total{path=device_to_host}"));
            assertEquals(s.pressureMode().ordinal(), m.get("tierkv_pressure_mode"));
            var es = kv.kvEventStats().orElseThrow();
            assertEquals(es.queued(), m.get("tierkv_kv_events_total{outcome=queued}"));
            assertEquals(es.batches(), m.get("tierkv_kv_event_batches_total"));
            // without a remote tier its series are there, at zero, so a dashboard's names do not depend on it
            for (String series : new String[] {"tierkv_remote_blocks_total{step=fetched}",
                "tierkv_remote_dropped_blocks_total{cause=store}", "tierkv_remote_failures_total{kind=timeout}",
                "tierkv_remote_pending_blocks", "tierkv_remote_breaker_open"}) {
                assertEquals(0.0, m.get(series), series);
            }
            assertTrue(s.demotions().blocks() > 0 && s.diskSpills().blocks() > 0 && s.disk().evictions() > 0,
                    "the workload moved blocks: " + s);
        }
    }

    @Test
    void aPortOutOfRangeIsRefusedNamingTheOption() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> new MetricsEndpoint(new TierKvMetrics(() -> null, java.util.Optional::empty), 70_000));
        assertEquals("--metrics-port: 70000 (expected 0 <= port <= 65535)", e.getMessage());
    }

    private static String scrape(int port) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + port + "/metrics").toURL()
                .openConnection();
        assertEquals(200, c.getResponseCode());
        assertEquals(MetricsEndpoint.CONTENT_TYPE, c.getContentType());
        try (InputStream in = c.getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /**
     * Parses the text format strictly: every line a HELP, a TYPE or a sample; every sample of a
     * family whose TYPE came first (counters end in _total); no sample twice.
     *
     * @return "name{k=v,...}" (labels sorted) -> value
     */
    static Map<String, Double> parse(String text) {
        Map<String, Double> out = new HashMap<>();
        Set<String> families = new HashSet<>();
        Map<String, String> types = new HashMap<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty() || line.startsWith("# HELP ")) {
                continue;
            }
            Matcher t = TYPE.matcher(line);
            if (t.matches()) {
                assertTrue(families.add(t.group(1)), "TYPE twice: " + line);
                types.put(t.group(1), t.group(2));
                continue;
            }
            Matcher s = SAMPLE.matcher(line);
            assertTrue(s.matches(), "not a Prometheus text line: " + line);
            String name = s.group(1);
            String family = types.containsKey(name) ? name : name.replaceAll("_total$", "");
            assertTrue(types.containsKey(family), "sample before its TYPE: " + line);
            if (types.get(family).equals("counter")) {
                assertTrue(name.endsWith("_total"), "counter without _total: " + line);
            }
            java.util.TreeMap<String, String> labels = new java.util.TreeMap<>();
            if (s.group(3) != null) {
                Matcher l = LABEL.matcher(s.group(3));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            StringBuilder key = new StringBuilder(name);
            if (!labels.isEmpty()) {
                key.append('{');
                labels.forEach((k, v) -> key.append(k).append('=').append(v).append(','));
                key.setCharAt(key.length() - 1, '}');
            }
            assertTrue(out.put(key.toString(), Double.parseDouble(s.group(s.groupCount() - 1).replace("Inf", "Infinity"))) == null,
                    "sample twice: " + line);
        }
        return out;
    }
}
