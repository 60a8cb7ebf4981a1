package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The manager options (issue 13): every command that has {@code --compression},
 * {@code --recent-blocks} or {@code --movers} takes them from the one {@link ManagerOptions}
 * mixin, with one default each, and those defaults are the library's.
 */
class ManagerOptionsTest {

    private static final List<String> NAMES = List.of("--compression", "--recent-blocks", "--movers");

    /** Creates the test. */
    ManagerOptionsTest() {
    }

    private static String mixinDefault(String name) {
        return CommandSpec.forAnnotatedObject(new ManagerOptions()).findOption(name).defaultValue();
    }

    /**
     * Every subcommand of {@code tierkv} (jlama included, when on the class path) that declares
     * one of the three options declares it through the mixin, with the mixin's default; replay,
     * decode and soak are those commands. Before the mixin soak's {@code --movers} default was 2
     * and replay's 1, decode's and soak's {@code --recent-blocks} 1 and replay's 2.
     */
    @Test
    void everyCommandWithAManagerOptionTakesItFromTheOneMixin() {
        TreeSet<String> withOptions = new TreeSet<>();
        for (Map.Entry<String, CommandLine> e : TierKvCli.commandLine().getSubcommands().entrySet()) {
            CommandSpec spec = e.getValue().getCommandSpec();
            boolean mixed = spec.mixins().values().stream().anyMatch(m -> m.userObject() instanceof ManagerOptions);
            for (String name : NAMES) {
                CommandLine.Model.OptionSpec o = spec.findOption(name);
                if (o == null) {
                    continue;
                }
                withOptions.add(e.getKey());
                assertTrue(mixed, e.getKey() + " declares " + name + " itself instead of using ManagerOptions");
                assertEquals(mixinDefault(name), o.defaultValue(), e.getKey() + " " + name);
            }
        }
        assertEquals(new TreeSet<>(List.of("decode", "replay", "soak")), withOptions);
    }

    /**
     * The defaults are those of {@code KvBlockManager.builder} (recent device blocks, mover
     * threads, read off a manager built without setting them) and of {@code DiskOptions.at}
     * (compression): none, 2 and 1.
     */
    @Test
    void theDefaultsAreTheLibrarysDefaults() {
        assertEquals(DiskOptions.at(Path.of("disk")).compression(),
                Compression.valueOf(mixinDefault("--compression").toUpperCase(Locale.ROOT)));
        KvLayout layout = KvLayout.of(1, 1, 8, DType.F16, 16);
        long block = layout.bytesPerBlock();
        Set<Thread> before = moverThreads();
        try (EmulatedDevice gpu = new EmulatedDevice(64 * block);
             KvBlockManager kv = KvBlockManager.builder(layout).device(gpu, 32 * block).host(32 * block).build()) {
            assertEquals(Integer.parseInt(mixinDefault("--recent-blocks")), kv.options().recentDeviceBlocks());
            Set<Thread> started = moverThreads();
            started.removeAll(before); // threads of managers closed earlier may still be ending
            assertEquals(Integer.parseInt(mixinDefault("--movers")), started.size());
        }
        assertEquals(List.of("none", "2", "1"), NAMES.stream().map(ManagerOptionsTest::mixinDefault).toList());
    }

    private static Set<Thread> moverThreads() {
        Set<Thread> movers = new HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith("tierkv-mover-")) {
                movers.add(t);
            }
        }
        return movers;
    }

    /**
     * A codec that is not one names the option, the value and the choices, with the bad-usage
     * status, in every command that has it.
     */
    @Test
    void anUnknownCodecNamesTheOptionAndTheChoices() {
        for (String command : List.of("replay", "decode", "soak")) {
            StringWriter err = new StringWriter();
            CommandLine cl = TierKvCli.commandLine();
            cl.setOut(new PrintWriter(new StringWriter(), true));
            cl.setErr(new PrintWriter(err, true));
            assertEquals(2, cl.execute(command, "--compression", "zip"), command + ": " + err);
            assertEquals(List.of("tierkv " + command + ": Invalid value for option '--compression': expected one of "
                    + "[NONE, LZ4] (case-insensitive) but was 'zip' (see tierkv " + command + " --help)"),
                    err.toString().lines().toList(), command + ": " + err);
        }
    }
}
