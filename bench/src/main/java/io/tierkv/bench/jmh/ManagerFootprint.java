package io.tierkv.bench.jmh;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;

/**
 * Heap and native bytes per block id of a whole {@link KvBlockManager} (issue 19 part 2): device
 * and host tiers, no disk tier (a disk record's own cost is {@link DiskRecordFootprint}'s).
 *
 * <p><b>Scenario.</b> Per count N: a manager over the emulated device with N/2 device slots and
 * N/2 host slots, so {@code maxBlocks = N}, a tiny layout (1 layer, 1 KV head, head dim 1, INT8,
 * 16 tokens: 32-byte blocks, so the pools are small and the metadata dominates), no movers. Heap in
 * use ({@code totalMemory - freeMemory} after repeated full collections) before the build, after
 * it, and after N blocks were written by sequences of 1,000 blocks each (one {@code appendBlock}
 * per block; the device fills and demotes to the host as it goes) and closed again: every block
 * sealed, hashed, indexed and cached on one tier. Native memory by Native Memory Tracking
 * category (committed bytes, {@code VM.native_memory summary}) before and after, when the JVM runs
 * with {@code -XX:NativeMemoryTracking=summary}: the manager's own off-heap metadata is in "Other"
 * (what its FFM arenas allocate); the pools are anonymous mappings NMT does not track; at small
 * counts class loading and the JIT show in the other categories. Run it with {@code -XX:+UseSerialGC} for exact
 * array sizes (G1 rounds large arrays up to whole regions).
 *
 * <p>Target (issue 19 part 2): at most 64 bytes of heap per block at 1e7 blocks.
 */
public final class ManagerFootprint {

    private static final int BLOCKS_PER_SEQUENCE = 1_000;

    private ManagerFootprint() {
    }

    /**
     * Runs the measurement for each count and prints bytes per block id.
     *
     * @param args block counts, comma-separated (default {@code 1e5,1e6}), each even and at least
     *             {@value #BLOCKS_PER_SEQUENCE}
     * @throws Exception if the native-memory report cannot be read
     */
    public static void main(String[] args) throws Exception {
        String counts = args.length > 0 ? args[0] : "1e5,1e6";
        for (String c : counts.split(",")) {
            measure((int) Double.parseDouble(c));
        }
    }

    private static void measure(int blocks) throws Exception {
        KvLayout layout = KvLayout.of(1, 1, 1, DType.INT8, 16);
        long half = (long) blocks / 2 * layout.bytesPerBlock();
        Map<String, Long> nativeBefore = nativeCommitted();
        long base = HeapProbe.settledUsedBytes();
        try (EmulatedDevice device = new EmulatedDevice(half + (1 << 20));
                KvBlockManager kv = KvBlockManager.builder(layout).device(device, half).host(half).movers(0)
                        .recentDeviceBlocks(0).build()) {
            long built = HeapProbe.settledUsedBytes();
            Map<String, Long> nativeBuilt = nativeCommitted();
            int maxBlocks = kv.options().maxBlocks();
            fill(kv, layout, blocks);
            long filled = HeapProbe.settledUsedBytes();
            Map<String, Long> nativeFilled = nativeCommitted();
            var cache = kv.stats().cache();
            System.out.printf(Locale.ROOT, "%,d block ids (device %,d, host %,d slots of %d B), max heap %,d MiB%n",
                    maxBlocks, blocks / 2, blocks / 2, layout.bytesPerBlock(), Runtime.getRuntime().maxMemory() >> 20);
            System.out.printf(Locale.ROOT, "  heap, built:                 %6.1f B/block%n", (double) (built - base) / maxBlocks);
            System.out.printf(Locale.ROOT, "  heap, every block cached:    %6.1f B/block  (target <= 64; cached %,d, indexed %,d)%n",
                    (double) (filled - base) / maxBlocks, cache.cachedBlocks(), cache.indexedBlocks());
            if (!nativeBefore.isEmpty()) {
                for (String category : nativeFilled.keySet()) {
                    if (category.equals("Java Heap")) {
                        continue; // the heap itself, measured above
                    }
                    long atBuild = nativeBuilt.getOrDefault(category, 0L) - nativeBefore.getOrDefault(category, 0L);
                    long atFill = nativeFilled.get(category) - nativeBefore.getOrDefault(category, 0L);
                    if (Math.abs(atFill) >= maxBlocks || Math.abs(atBuild) >= maxBlocks) {
                        System.out.printf(Locale.ROOT, "  native %-22s built %7.1f, cached %7.1f B/block%n", category + ":",
                                (double) atBuild / maxBlocks, (double) atFill / maxBlocks);
                    }
                }
            }
        }
    }

    private static void fill(KvBlockManager kv, KvLayout layout, int blocks) {
        int b = layout.blockSizeTokens();
        int[] tokens = new int[b];
        int next = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment image = arena.allocate(layout.bytesPerBlock());
            for (int written = 0; written < blocks; ) {
                try (Sequence seq = kv.openSequence(SequenceOptions.salt("footprint"))) {
                    for (int i = 0; i < BLOCKS_PER_SEQUENCE && written < blocks; i++, written++) {
                        for (int t = 0; t < b; t++) {
                            tokens[t] = next++;
                        }
                        seq.appendBlock(tokens, 0, image);
                    }
                }
            }
        }
    }

    /** Committed bytes per Native Memory Tracking category; empty when tracking is off. */
    private static Map<String, Long> nativeCommitted() throws Exception {
        Object out = ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
                new Object[] {new String[] {"summary"}}, new String[] {String[].class.getName()});
        Map<String, Long> committed = new LinkedHashMap<>();
        Matcher m = Pattern.compile("-\\s+([A-Za-z ]+?) \\(reserved=(\\d+)KB, committed=(\\d+)KB").matcher(out.toString());
        while (m.find()) {
            committed.put(m.group(1).trim(), Long.parseLong(m.group(3)) * 1024);
        }
        return committed;
    }
}
