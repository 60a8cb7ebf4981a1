package io.tierkv.bench.cli;

import io.tierkv.core.budget.MachineMemory;
import io.tierkv.core.error.MachineLimitException;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Words a {@link MachineLimitException} as the command line's user typed it: the builder's option
 * ({@code device.budgetBytes}) becomes the command's option that set it ({@code --device-bytes},
 * else {@code --device-tokens}, {@code --device-blocks} or the {@code --sweep} point), with the value
 * as typed, then the bytes, the resource and the bound.
 */
final class MachineLimitMessage {

    /** The command-line options that set each builder option, in the order they are preferred. */
    private static final Map<String, List<String>> OPTIONS = Map.of(
            "device.budgetBytes", List.of("--sweep", "--device-bytes", "--device-tokens", "--device-blocks"),
            "host.budgetBytes", List.of("--host-bytes", "--host-tokens", "--host-blocks"),
            "disk.budgetBytes", List.of("--disk-bytes"));

    private MachineLimitMessage() {
    }

    /**
     * Words the exception for a command.
     *
     * @param e   the refusal
     * @param cmd the command that ran
     * @return one line, for example {@code --device-bytes 10t (10.0 TiB) does not fit host memory:
     *         needs ...; available ...}
     */
    static String of(MachineLimitException e, CommandLine cmd) {
        CommandLine.ParseResult parsed = cmd.getParseResult();
        OptionSpec chosen = null;
        for (String name : OPTIONS.getOrDefault(e.option(), List.of())) {
            OptionSpec o = cmd.getCommandSpec().findOption(name);
            if (o == null) {
                continue;
            }
            if (parsed != null && parsed.hasMatchedOption(name)) {
                chosen = o;
                break;
            }
            if (chosen == null && !name.equals("--sweep")) {
                chosen = o;
            }
        }
        String typed;
        String bytes = MachineMemory.format(e.valueBytes());
        if (chosen == null) {
            typed = e.option() + " " + e.valueBytes() + " (" + bytes + ")";
        } else if (parsed != null && parsed.hasMatchedOption(chosen.longestName())) {
            typed = chosen.longestName() + " " + String.join(",", parsed.matchedOption(chosen.longestName()).stringValues())
                    + " (" + bytes + ")";
        } else if (chosen.defaultValue() == null) { // a default the command derives from other options
            typed = chosen.longestName() + " (not given: " + bytes + ", derived from the options given)";
        } else {
            typed = chosen.longestName() + " " + chosen.defaultValue() + " (the default, " + bytes + ")";
        }
        return typed + " does not fit " + e.resource() + ": " + e.reason();
    }
}
