package io.tierkv.bench.cli;

import io.tierkv.core.testing.ChildJava;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code tierkv} run as the user runs it: in its own JVM, with the test JVM's paths and access
 * flags ({@link ChildJava}: the module path, as surefire runs bench's tests), stdout and stderr
 * together.
 */
final class CliProcess {

    /**
     * What a child printed and its status.
     *
     * @param status the exit status
     * @param output stdout and stderr together
     */
    record Result(int status, String output) {
    }

    private CliProcess() {
    }

    /**
     * The child's command line.
     *
     * @param args the tierkv arguments
     * @return java, its flags, the main class and {@code args}
     */
    static List<String> command(String... args) {
        return command(List.of(), args);
    }

    /**
     * The child's command line with extra JVM options.
     *
     * @param jvmOptions for example {@code -Djava.io.tmpdir=DIR}
     * @param args       the tierkv arguments
     * @return java, its flags, the main class and {@code args}
     */
    static List<String> command(List<String> jvmOptions, String... args) {
        List<String> options = new ArrayList<>(jvmOptions);
        options.addAll(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1"));
        return ChildJava.command(options, TierKvCli.class, args);
    }

    /**
     * Starts the child.
     *
     * @param jvmOptions extra JVM options
     * @param env        extra environment variables
     * @param args       the tierkv arguments
     * @return the process, stderr merged into stdout
     * @throws IOException if it cannot start
     */
    static Process start(List<String> jvmOptions, Map<String, String> env, String... args) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command(jvmOptions, args)).redirectErrorStream(true);
        pb.environment().put("MALLOC_ARENA_MAX", "2");
        pb.environment().putAll(env);
        return pb.start();
    }

    /**
     * Runs the child to its end (60 s at most).
     *
     * @param args the tierkv arguments
     * @return its status and output
     * @throws IOException          if it cannot start
     * @throws InterruptedException if interrupted while waiting
     */
    static Result run(String... args) throws IOException, InterruptedException {
        return run(List.of(), args);
    }

    /**
     * Runs the child with extra JVM options to its end (60 s at most).
     *
     * @param jvmOptions extra JVM options
     * @param args       the tierkv arguments
     * @return its status and output
     * @throws IOException          if it cannot start
     * @throws InterruptedException if interrupted while waiting
     */
    static Result run(List<String> jvmOptions, String... args) throws IOException, InterruptedException {
        return run(null, jvmOptions, args);
    }

    /**
     * Runs the child in a working directory with extra JVM options to its end (60 s at most).
     *
     * @param workDir    the working directory, or null for this JVM's
     * @param jvmOptions extra JVM options
     * @param args       the tierkv arguments
     * @return its status and output
     * @throws IOException          if it cannot start
     * @throws InterruptedException if interrupted while waiting
     */
    static Result run(Path workDir, List<String> jvmOptions, String... args) throws IOException,
            InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command(jvmOptions, args)).redirectErrorStream(true);
        pb.environment().put("MALLOC_ARENA_MAX", "2");
        if (workDir != null) {
            pb.directory(workDir.toFile());
        }
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("tierkv timed out: " + List.of(args));
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }
}
