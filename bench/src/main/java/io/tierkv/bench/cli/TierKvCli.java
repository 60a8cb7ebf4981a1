package io.tierkv.bench.cli;

import io.tierkv.bench.trace.TraceFormatException;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.error.DirectoryRefusedException;
import io.tierkv.core.error.MachineLimitException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code tierkv}: the command line of TierKV. Subcommands: {@code replay}, {@code decode},
 * {@code simulate}, {@code soak}, {@code jlama} (from module jlama, when on the class path); {@code tierkv help <command>} or {@code tierkv <command> --help} lists the
 * options. The entry point of {@code bench/target/tierkv.jar}.
 */
@Command(name = "tierkv", mixinStandardHelpOptions = true, versionProvider = TierKvCli.Version.class,
        description = "TierKV: an off-heap, paged, tiered KV-cache block manager for JVM LLM runtimes.",
        subcommands = {ReplayCommand.class, DecodeCommand.class, SimulateCommand.class, SoakCommand.class,
            RestartBenchCommand.class,
            CommandLine.HelpCommand.class},
        synopsisSubcommandLabel = "COMMAND")
public final class TierKvCli implements java.util.concurrent.Callable<Integer> {

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /** Creates the top command (picocli instantiates it). */
    public TierKvCli() {
    }

    /**
     * Runs the command line and exits with its status.
     *
     * @param args the arguments
     */
    public static void main(String[] args) {
        Interrupts.install();
        int status = execute(args);
        Interrupts.finished();
        System.exit(status);
    }

    /**
     * Runs the command line without exiting (for tests and embedding).
     *
     * @param args the arguments
     * @return the exit status: 0 success, 1 a failed check, 2 bad usage, an unreadable input or a
     *         size this machine cannot give (a {@link MachineLimitException}, named by its option)
     */
    public static int execute(String... args) {
        return commandLine().execute(args);
    }

    /**
     * The configured picocli command line.
     *
     * @return a new command line
     */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new TierKvCli());
        addByName(cl, "jlama", "io.tierkv.jlama.cli.JlamaCommand");
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setParameterExceptionHandler(TierKvCli::badParameter);
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            if (e instanceof MachineLimitException m) { // a size this machine cannot give: bad usage, not a failed check
                cmd.getErr().println("tierkv " + cmd.getCommandName() + ": " + MachineLimitMessage.of(m, cmd));
                return 2;
            }
            if (e instanceof CapacityExhaustedException c) { // budgets too small for what the options run at once
                cmd.getErr().println("tierkv " + cmd.getCommandName() + ": " + c.getMessage() + " (the tiers are too "
                        + "small for this run: raise their budgets, or lower what runs at once)");
                return 2;
            }
            if (e instanceof DirectoryRefusedException d) { // a directory holding what the tier must not touch: usage
                cmd.getErr().println("tierkv " + cmd.getCommandName() + ": " + optionGiving(cmd, d.directory())
                        + d.getMessage().replace(" or set wipeOnLayoutMismatch", " or delete its files (the"
                                + " library's DiskOptions.withWipeOnLayoutMismatch has no option here)"));
                return 2;
            }
            if (e instanceof IllegalArgumentException || e instanceof java.io.IOException
                    || e instanceof java.io.UncheckedIOException || e instanceof TraceFormatException) {
                cmd.getErr().println("tierkv " + cmd.getCommandName() + ": " + asTyped(cmd, e.getMessage()) + causeNote(e));
                return 2;
            }
            throw e;
        });
        return cl;
    }

    /** The library's layout fields, as the commands' options name them. */
    private static final java.util.Map<String, String> FIELD_OPTIONS = java.util.Map.of("blockSizeTokens: ",
            "--block-tokens ", "kvHeads: ", "--kv-heads ", "layers: ", "--layers ", "headDim: ", "--head-dim ");

    /**
     * A message that starts with a library field the command sets from an option of its own
     * ({@code blockSizeTokens: 100000 (...)}), reworded to name the option as typed
     * ({@code --block-tokens 100000 (...)}); any other message as it is.
     */
    private static String asTyped(CommandLine cmd, String message) {
        for (var f : FIELD_OPTIONS.entrySet()) {
            if (message != null && message.startsWith(f.getKey())
                    && cmd.getCommandSpec().findOption(f.getValue().strip()) != null) {
                return f.getValue() + message.substring(f.getKey().length());
            }
        }
        return message;
    }

    /**
     * The option whose path holds {@code dir}, as {@code "--disk-dir DIR: "}, or nothing when no
     * option of the command gave it (a default directory).
     */
    private static String optionGiving(CommandLine cmd, java.nio.file.Path dir) {
        java.nio.file.Path refused = dir.toAbsolutePath().normalize();
        for (picocli.CommandLine.Model.OptionSpec o : cmd.getCommandSpec().options()) {
            if (o.getValue() instanceof java.nio.file.Path p && refused.startsWith(p.toAbsolutePath().normalize())) {
                return o.longestName() + " " + p + ": ";
            }
        }
        return "";
    }

    /**
     * A value picocli cannot parse or an option it does not know: picocli's message on one line
     * (for an enum it lists the values allowed), where to read the usage, and the bad-usage status,
     * instead of the whole usage.
     */
    private static int badParameter(CommandLine.ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        String path = cmd.getParent() == null ? "tierkv" : "tierkv " + cmd.getCommandName();
        String message = e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse("");
        cmd.getErr().println(path + ": " + message + " (see " + path + " --help)");
        return 2;
    }

    /** The cause in parentheses, or nothing when the message already says what its first line says. */
    private static String causeNote(Exception e) {
        Throwable c = e.getCause();
        if (c == null || c == e) {
            return "";
        }
        String first = c.getMessage() == null ? "" : c.getMessage().lines().findFirst().orElse("").strip();
        if (!first.isEmpty() && e.getMessage() != null && e.getMessage().contains(first)) {
            return "";
        }
        return " (" + c + ")";
    }

    /**
     * Adds a subcommand that lives in a module this one cannot read at compile time (module
     * {@code jlama}: its classes share a package with Jlama, so it runs on the class path only);
     * absent from the class path, the command is not offered.
     */
    private static void addByName(CommandLine cl, String name, String className) {
        Object command;
        try {
            command = Class.forName(className).getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | LinkageError e) {
            return;
        }
        cl.addSubcommand(name, command);
    }

    /**
     * A bare {@code tierkv}, without a command: prints the usage on stderr.
     *
     * @return 2, bad usage
     */
    @Override
    public Integer call() {
        spec.commandLine().getErr().println("tierkv: a COMMAND is required");
        spec.commandLine().usage(spec.commandLine().getErr());
        return 2;
    }

    /** The version from the jar's manifest, or "dev" when run from classes. */
    static final class Version implements CommandLine.IVersionProvider {
        /** Creates the provider (picocli instantiates it). */
        Version() {
        }

        @Override
        public String[] getVersion() {
            String v = TierKvCli.class.getPackage().getImplementationVersion();
            return new String[] {"tierkv " + (v == null ? "dev" : v) + " (Java " + Runtime.version() + ")"};
        }
    }
}
