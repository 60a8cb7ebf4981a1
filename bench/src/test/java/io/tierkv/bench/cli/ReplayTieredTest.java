package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.bench.trace.TraceRequest;
import io.tierkv.core.KvLayout;
import io.tierkv.tiers.disk.Compression;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code tierkv replay} through the real tier manager (device, host and an LZ4 disk tier) on the
 * built-in generator with payload {@code full}: every matched block comes back byte for byte from
 * whichever tier held it, and since the disk budget holds the whole working set nothing is ever
 * dropped, so the hit tokens equal the infinite-capacity reference exactly.
 */
class ReplayTieredTest {

    /** Creates the test. */
    ReplayTieredTest() {
    }

    /**
     * Three tiers, payload full, with and without a background mover.
     *
     * @param movers mover threads
     * @param dir    a temporary directory for the disk tier
     */
    @ParameterizedTest(name = "movers={0}")
    @ValueSource(ints = {0, 1})
    void everyTierServesVerifiedBytes(int movers, @TempDir Path dir) {
        int b = 64;
        TraceInput input = TraceInput.load(null, TraceInput.Format.GENERATOR, b, 200, 7);
        List<TraceRequest> requests = input.requests();
        KvLayout layout = LayoutPreset.TINY.layout(b);
        long perToken = layout.bytesPerToken();
        ReplayConfig config = new ReplayConfig(layout, 16_384 * perToken, 32_768 * perToken, dir.resolve("disk"),
                64L << 20, Compression.LZ4, "lru", 2, movers, ReplayConfig.Payload.FULL, 64, 0, 100_000_000L, null);
        ReplayReport r = new Replayer(config).run(requests, b, input.source(), input.format(), Progress.none());

        assertEquals(0, r.events().verifyFailures(), "bytes read back differ");
        assertEquals(0, r.hits().lost(), "blocks lost below");
        assertEquals(List.of(), r.invariantViolations());
        assertEquals(0, r.rejectedRequests());
        assertEquals(ReplayHitRateTest.referenceInfinite(requests, b), r.hitTokens(), "nothing dropped: ceiling");
        assertTrue(r.hits().device() > 0 && r.hits().host() + r.hits().disk() > 0, "hits on and below the device: "
                + r.hits());
        if (movers == 0) { // with a mover, promotion on match can load a block twice, blurring the host/disk split
            assertTrue(r.hits().host() > 0 && r.hits().disk() > 0, "hits on every tier: " + r.hits());
        }
        assertEquals(r.hits().matchedBlocks(), r.hits().device() + r.hits().host() + r.hits().disk());
        assertTrue(r.events().demotions() > 0 && r.events().promotions() > 0 && r.events().diskSpills() > 0);
        assertEquals(r.hits().matchedBlocks() * layout.bytesPerBlock(), r.moves().payloadVerified());
        assertTrue(r.moves().diskToDevice().blocks() >= r.hits().disk());
    }
}
