package io.tierkv.tiers.disk.store;

import static io.tierkv.tiers.disk.store.DiskTestSupport.block;
import static io.tierkv.tiers.disk.store.DiskTestSupport.getAndVerify;
import static io.tierkv.tiers.disk.store.DiskTestSupport.hi;
import static io.tierkv.tiers.disk.store.DiskTestSupport.identity;
import static io.tierkv.tiers.disk.store.DiskTestSupport.lo;
import static io.tierkv.tiers.disk.store.DiskTestSupport.options;
import static io.tierkv.tiers.disk.store.DiskTestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskStats;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fault-injection hook ({@link DiskFaultInjection}) damages the bytes each verification covers,
 * the tier's own checks find every damage, and corruption is logged once per kind with a count.
 */
class DiskFaultInjectionTest {

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();
    private DiskFaultInjection injection;

    @AfterEach
    void uninstall() {
        if (injection != null) {
            injection.uninstall();
        }
        arena.close();
    }

    @Test
    void everyRecordTheInjectorDamagesIsFoundByTheVerificationThatFollowsAndCountedOnce() {
        try (DiskTier tier = DiskTier.open(options(dir, 4, 1 << 20).withCompression(Compression.NONE),
                DiskTestSupport.LAYOUT)) {
            for (int k = 0; k < 30; k++) {
                assertTrue(put(tier, arena, k));
            }
            injection = DiskFaultInjection.install(1.0, 7);
            for (int k = 0; k < 10; k++) { // a load: header, identity or payload
                assertFalse(getAndVerify(tier, arena, k), "key " + k);
            }
            for (int k = 10; k < 20; k++) { // a match: header or identity
                int found = tier.match(hi(k), lo(k), identity(arena, k));
                assertEquals(DiskTier.DAMAGED, found, "key " + k);
            }
            for (int k = 20; k < 30; k++) { // a pinning put of a key stored: header, identity or payload
                long pin = tier.putPinned(hi(k), lo(k), identity(arena, k), block(arena, k));
                assertTrue(pin != DiskTier.NO_PIN, "written anew, key " + k);
                tier.pinning().unpin(hi(k), lo(k), pin);
            }
            injection.uninstall();
            DiskStats s = tier.stats();
            assertEquals(30, injection.injected());
            assertEquals(30, s.corruptMisses(), "each damage found once: " + s);
            assertEquals(30, s.quarantined());
            assertEquals(0, s.collisions(), "damaged identity bytes are damage, not another block");
            assertEquals(s.gets(), s.hits() + s.misses(), s.toString());
            assertEquals(10, tier.blockCount(), "the ten keys written anew");
            for (int k = 20; k < 30; k++) {
                assertTrue(getAndVerify(tier, arena, k), "key " + k);
            }
            tier.checkInvariants();
        }
    }

    @Test
    void aPinnedRecordQuarantinedOnReadLeavesABrokenPinItsHolderReleases() {
        try (DiskTier tier = DiskTier.open(options(dir, 4, 1 << 20), DiskTestSupport.LAYOUT)) {
            long pin = tier.putPinned(hi(1), lo(1), identity(arena, 1), block(arena, 1));
            injection = DiskFaultInjection.install(1.0, 3);
            assertFalse(getAndVerify(tier, arena, 1));
            injection.uninstall();
            assertTrue(tier.pinning().pinBroken(pin));
            assertEquals(1, tier.pinning().brokenPins());
            assertEquals(0, tier.stats().pinnedBlocks());
            assertEquals(null, tier.pinning().checkPins(new long[] {hi(1)}, new long[] {lo(1)}, new long[] {pin}, new int[] {1},
                    1), "one broken pin, held once");
            assertTrue(tier.pinning().checkPins(new long[0], new long[0], new long[0], new int[0], 0).contains("1 broken pins"),
                    "a broken pin nobody holds is found");
            long again = tier.putPinned(hi(1), lo(1), identity(arena, 1), block(arena, 1));
            assertFalse(tier.pinning().unpin(hi(1), lo(1), pin), "the broken pin, not the new record's");
            assertEquals(1, tier.pinning().pins(hi(1), lo(1)));
            assertTrue(tier.pinning().unpin(hi(1), lo(1), again));
            assertEquals(0, tier.pinning().brokenPins());
            tier.checkInvariants();
        }
    }

    @Test
    @SuppressWarnings("GuardedBy") // reads the tier's parts from the test thread while nothing else uses the tier
    void damagedRecordsAreCountedPerKindByTheTiersLog() throws IOException {
        try (DiskTier tier = DiskTier.open(options(dir, 4, 1 << 20).withCompression(Compression.NONE),
                DiskTestSupport.LAYOUT)) {
            for (int k = 0; k < 5; k++) {
                assertTrue(put(tier, arena, k));
                DiskProbe.RecordLocation at = DiskProbe.recordLocations(tier).getLast();
                try (FileChannel ch = FileChannel.open(at.file(), StandardOpenOption.WRITE)) {
                    // past the header, in the payload: a checksum mismatch
                    ch.write(ByteBuffer.wrap(new byte[] {0x55, 0x5A}), at.offset() + DiskFormat.RECORD_HEADER_BYTES + 200);
                }
            }
            for (int k = 0; k < 5; k++) {
                assertFalse(getAndVerify(tier, arena, k));
            }
            assertEquals(5, tier.stats().corruptMisses());
            assertEquals(5, tier.corruptionLog.count(CorruptionLog.Kind.PAYLOAD));
            assertEquals(0, tier.corruptionLog.count(CorruptionLog.Kind.HEADER));
        }
    }

    @Test
    void corruptionIsLoggedOncePerKindAndSummedUpWithItsCountsAtClose() {
        List<String> lines = new ArrayList<>();
        CorruptionLog log = new CorruptionLog(dir, new Capture(lines));
        for (int i = 0; i < 5; i++) {
            log.found(CorruptionLog.Kind.PAYLOAD, "seg-1.tkv@" + (64 + 4096 * i), "payload checksum mismatch");
        }
        log.found(CorruptionLog.Kind.HEADER, "seg-1.tkv@9000", "header checksum");
        assertEquals(2, lines.size(), "one line per kind: " + lines);
        assertTrue(lines.get(0).contains("payload checksum mismatch at seg-1.tkv@64"), lines.get(0));
        assertTrue(lines.get(1).contains("record header damaged at seg-1.tkv@9000"), lines.get(1));
        log.summary();
        assertEquals(3, lines.size());
        assertTrue(lines.get(2).contains("record header damaged x 1, payload checksum mismatch x 5"), lines.get(2));
        CorruptionLog once = new CorruptionLog(dir, new Capture(lines));
        once.found(CorruptionLog.Kind.DECODE, "seg-2.tkv@64", "does not decode");
        once.summary();
        assertEquals(4, lines.size(), "no summary when each kind was seen once: its line said it all");
    }

    /** A logger that keeps the formatted messages it is given at WARNING and above. */
    private record Capture(List<String> lines) implements System.Logger {
        @Override
        public String getName() {
            return "capture";
        }

        @Override
        public boolean isLoggable(Level level) {
            return level.getSeverity() >= Level.WARNING.getSeverity();
        }

        @Override
        public void log(Level level, java.util.ResourceBundle bundle, String msg, Throwable thrown) {
            if (isLoggable(level)) {
                lines.add(msg);
            }
        }

        @Override
        public void log(Level level, java.util.ResourceBundle bundle, String format, Object... params) {
            if (isLoggable(level)) {
                lines.add(java.text.MessageFormat.format(format, params));
            }
        }
    }

    @Test
    void installValidatesItsRateAndRefusesASecondInjector() {
        assertThrows(IllegalArgumentException.class, () -> DiskFaultInjection.install(0, 1));
        assertThrows(IllegalArgumentException.class, () -> DiskFaultInjection.install(1.5, 1));
        assertThrows(IllegalArgumentException.class, () -> DiskFaultInjection.install(Double.NaN, 1));
        injection = DiskFaultInjection.install(0.5, 1);
        assertThrows(IllegalStateException.class, () -> DiskFaultInjection.install(0.5, 2));
        injection.uninstall();
        injection.uninstall(); // idempotent
        injection = DiskFaultInjection.install(0.25, 2);
        assertEquals(0.25, injection.rate());
        assertEquals(0, injection.injected());
    }
}
