package io.tierkv.natives.testing;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Runs a {@code main} class of the tests in a child JVM, the way this JVM runs it, and captures
 * its output: on the module path when the class is in a named module (surefire patches the test
 * classes into {@code io.tierkv.natives}), else on the class path. The same rules as core's
 * {@code io.tierkv.core.testing.ChildJava}, which this module cannot use (core depends on no
 * module of ours; native is built first).
 */
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
     * @param jvmFlags JVM flags, for example {@code NativeAccess.flag()} (which names this JVM's
     *                 module, as the child runs in the same one)
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
        cmd.addAll(launch(mainClass));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("child JVM timed out: " + cmd);
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    /**
     * The arguments that put this JVM's code on the child's paths and name {@code mainClass}:
     * {@code --module-path ... [--patch-module M=DIR] --add-modules ALL-MODULE-PATH --add-reads
     * M=ALL-UNNAMED -cp ... class} when the class is in a named module (the way surefire starts
     * its own JVM), {@code -cp ... class} otherwise.
     *
     * @param mainClass the class with {@code main}
     * @return the arguments, after the JVM flags and before the program's arguments
     */
    public static List<String> launch(Class<?> mainClass) {
        String classPath = System.getProperty("java.class.path", "");
        Module module = mainClass.getModule();
        if (!module.isNamed()) {
            return List.of("-cp", classPath, mainClass.getName());
        }
        String modulePath = System.getProperty("jdk.module.path", "");
        List<String> args = new ArrayList<>(List.of("--module-path", modulePath));
        Path home;
        try {
            home = Path.of(mainClass.getProtectionDomain().getCodeSource().getLocation().toURI()).toAbsolutePath()
                    .normalize();
        } catch (URISyntaxException e) {
            throw new IllegalStateException("no file location for " + mainClass, e);
        }
        Set<Path> onModulePath = Stream.of(modulePath.split(File.pathSeparator)).filter(e -> !e.isEmpty())
                .map(e -> Path.of(e).toAbsolutePath().normalize()).collect(Collectors.toSet());
        if (!onModulePath.contains(home)) {
            args.addAll(List.of("--patch-module", module.getName() + "=" + home));
        }
        // as surefire: every module of the module path resolved (some are needed and required by
        // none: slf4j for chronicle and Lettuce), the module reading the class path
        args.addAll(List.of("--add-modules", "ALL-MODULE-PATH", "--add-reads", module.getName() + "=ALL-UNNAMED"));
        if (!classPath.isEmpty()) {
            args.addAll(List.of("-cp", classPath));
        }
        // the class, not -m module/class: the initial class is then found through the class path
        // launcher, as surefire's is, so the system modules are roots as in this JVM
        args.add(mainClass.getName());
        return args;
    }
}
