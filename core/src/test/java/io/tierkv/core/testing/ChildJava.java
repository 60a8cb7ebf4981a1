package io.tierkv.core.testing;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The command line of a child JVM that runs a {@code main} class the way this (test) JVM runs its
 * code: on the module path when the class is in a named module (surefire patches a module's test
 * classes into it), else on the class path.
 *
 * <p>On the module path the child gets this JVM's {@code jdk.module.path} and class path, the
 * class's own directory patched into its module when it is not on the module path (a test class),
 * every module of the module path resolved and the module reading the class path (as surefire's
 * {@code --add-modules ALL-MODULE-PATH} and {@code --add-reads}), then the class. The class path
 * alone would leave TierKV's modules out, since surefire puts them on the module path. The access
 * flags are the build's {@code tierkv.test.jvm.flags} (surefire passes them as the system property
 * of that name), which grant native access and chronicle's opens to the modules this JVM
 * resolved; the child resolves the same ones.
 */
public final class ChildJava {

    /** The system property surefire sets to the JVM flags of the tests ({@code tierkv.test.jvm.flags}). */
    public static final String FLAGS_PROPERTY = "tierkv.test.jvm.flags";

    private ChildJava() {}

    /** {@return the {@code java} launcher of this JVM} */
    public static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * The access flags a child that runs TierKV needs: {@code tierkv.test.jvm.flags} when surefire
     * set it, else this JVM's own {@code --enable-native-access}, {@code --add-opens},
     * {@code --add-exports} and {@code --sun-misc-unsafe-memory-access} flags.
     *
     * @return the flags, each one argument
     */
    public static List<String> accessFlags() {
        String configured = System.getProperty(FLAGS_PROPERTY, "").strip();
        if (!configured.isEmpty()) {
            return List.of(configured.split("\\s+"));
        }
        return ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith("--enable-native-access") || a.startsWith("--add-opens=java.base/")
                        || a.startsWith("--add-exports=java.base/") || a.startsWith("--sun-misc-unsafe-memory-access"))
                .toList();
    }

    /**
     * The arguments that put this JVM's code on the child's paths and name {@code mainClass} as
     * what it runs: {@code --module-path ... [--patch-module M=DIR] --add-modules ALL-MODULE-PATH
     * --add-reads M=ALL-UNNAMED -cp ... class} when the class is in a named module (the way
     * surefire starts its own JVM), {@code -cp ... class} otherwise.
     *
     * @param mainClass the class with {@code main}
     * @return the arguments, after the JVM options and before the program's arguments
     */
    public static List<String> launch(Class<?> mainClass) {
        String classPath = System.getProperty("java.class.path", "");
        Module module = mainClass.getModule();
        List<String> args = new ArrayList<>();
        if (!module.isNamed()) {
            args.addAll(List.of("-cp", classPath, mainClass.getName()));
            return args;
        }
        String modulePath = System.getProperty("jdk.module.path", "");
        args.addAll(List.of("--module-path", modulePath));
        Path home = location(mainClass);
        Set<Path> onModulePath = entries(modulePath).stream().map(Path::of).map(p -> p.toAbsolutePath().normalize())
                .collect(Collectors.toSet());
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
        // launcher, as surefire's is, so the system modules are roots as in this JVM (chronicle
        // needs jdk.unsupported, which nothing requires)
        args.add(mainClass.getName());
        return args;
    }

    /**
     * The whole command: {@link #java()}, {@link #accessFlags()}, {@code jvmOptions},
     * {@link #launch(Class)} and {@code args}.
     *
     * @param jvmOptions more JVM options, for example {@code -Xmx256m}
     * @param mainClass  the class with {@code main}
     * @param args       its arguments
     * @return the command
     */
    public static List<String> command(List<String> jvmOptions, Class<?> mainClass, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(java());
        cmd.addAll(accessFlags());
        cmd.addAll(jvmOptions);
        cmd.addAll(launch(mainClass));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /**
     * Every entry of this JVM's module path and class path, in that order: what a child that puts
     * everything on one path of its own (the README's module-path command) starts from.
     *
     * @return the entries as given, existing or not
     */
    public static List<String> pathEntries() {
        return Stream.concat(entries(System.getProperty("jdk.module.path", "")).stream(),
                entries(System.getProperty("java.class.path", "")).stream()).toList();
    }

    private static List<String> entries(String path) {
        return Stream.of(path.split(File.pathSeparator)).filter(e -> !e.isEmpty()).toList();
    }

    private static Path location(Class<?> c) {
        try {
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toAbsolutePath().normalize();
        } catch (URISyntaxException e) {
            throw new IllegalStateException("no file location for " + c, e);
        }
    }
}
