package io.tierkv.natives.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a {@code main} class of the test class path in a child JVM and captures its output. */
public final class ChildJvm {

    private ChildJvm() {}

    /**
     * The result of a child run.
     *
     * @param exitCode the exit status
     * @param output stdout and stderr together
     */
    public record Result(int exitCode, String output) {}

    /**
     * Runs {@code mainClass} with the given JVM flags, prefixed by a launcher command (for example
     * {@code prlimit}), and waits up to a minute.
     *
     * @param prefix commands placed before {@code java}, may be empty
     * @param jvmFlags JVM flags, for example {@code --enable-native-access=ALL-UNNAMED}
     * @param mainClass the class with {@code main}
     * @param args its arguments
     * @return exit code and output
     * @throws IOException if the child cannot be started
     * @throws InterruptedException if interrupted while waiting
     */
    public static Result run(List<String> prefix, List<String> jvmFlags, Class<?> mainClass, String... args)
            throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(java.toString());
        cmd.addAll(jvmFlags);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(mainClass.getName());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("child JVM timed out: " + cmd);
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }
}
