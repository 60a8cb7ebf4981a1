package io.tierkv.natives.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code native/jextract/GenerateBindings.java} as a developer does, with the JDK's
 * source-file launcher in a child JVM, from the module folder (the tests' working directory).
 */
public final class BindingGenerator {

    /** The generator, relative to the module folder. */
    public static final Path SOURCE = Path.of("jextract/GenerateBindings.java");

    /** The symbol list it reads by default. */
    public static final Path SYMBOLS = Path.of("jextract/gpu.symbols");

    private BindingGenerator() {}

    /**
     * The result of a run.
     *
     * @param exitCode the exit status
     * @param stdout what it printed to standard output
     * @param stderr what it printed to standard error
     */
    public record Result(int exitCode, String stdout, String stderr) {}

    /**
     * Runs the generator and waits up to two minutes (the launcher compiles it first).
     *
     * @param args its arguments
     * @return exit code and output
     * @throws IOException if the child cannot be started
     * @throws InterruptedException if interrupted while waiting
     */
    public static Result run(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), SOURCE.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).start();
        byte[][] err = new byte[1][];
        Thread drain = Thread.ofVirtual().start(() -> { // stderr on its own thread: neither pipe may fill
            try {
                err[0] = p.getErrorStream().readAllBytes();
            } catch (IOException e) {
                err[0] = ("(stderr unreadable: " + e + ")").getBytes(StandardCharsets.UTF_8);
            }
        });
        byte[] out = p.getInputStream().readAllBytes();
        drain.join();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("generator timed out: " + cmd);
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8),
                new String(err[0], StandardCharsets.UTF_8));
    }

    /**
     * Runs the generator and requires it to succeed.
     *
     * @param args its arguments
     * @return its standard output
     * @throws IOException if the child cannot be started
     * @throws InterruptedException if interrupted while waiting
     * @throws AssertionError if it exits non-zero, with its error output
     */
    public static String runOk(String... args) throws IOException, InterruptedException {
        Result r = run(args);
        if (r.exitCode() != 0) {
            throw new AssertionError("GenerateBindings " + String.join(" ", args) + " exited " + r.exitCode()
                    + ":\n" + r.stderr());
        }
        return r.stdout();
    }
}
