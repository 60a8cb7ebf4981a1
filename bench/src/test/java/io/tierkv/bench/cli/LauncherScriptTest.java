package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher {@code bench/tierkv} checks the JDK it is given before it starts one: a
 * {@code JAVA_HOME} older than 25, or without {@code bin/java}, is refused with one line and exit
 * status 2, where the JVM once failed on the launcher's flags with "Could not create the Java
 * Virtual Machine".
 */
class LauncherScriptTest {

    /** Creates the test. */
    LauncherScriptTest() {
    }

    /** What the launcher printed (stdout and stderr together) and its status. */
    private record Result(int status, String output) {
    }

    private static Result launch(Path javaHome) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", Path.of("tierkv").toAbsolutePath().toString(), "-V")
                .redirectErrorStream(true);
        pb.environment().put("JAVA_HOME", javaHome.toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("bench/tierkv timed out");
        }
        return new Result(p.exitValue(), out);
    }

    /**
     * A {@code JAVA_HOME} whose java says it is 17 is refused with its version.
     *
     * @param home a fake JDK home
     * @throws Exception on failure
     */
    @Test
    void aJavaHomeOlderThan25IsRefusedWithItsVersion(@TempDir Path home) throws Exception {
        Path java = Files.createDirectories(home.resolve("bin")).resolve("java");
        Files.writeString(java, "#!/bin/sh\necho 'openjdk version \"17.0.2\" 2022-01-18' >&2\n"
                + "[ \"$1\" = -version ] && exit 0\necho 'Unrecognized option' >&2\nexit 1\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwx------"));
        Result r = launch(home);
        assertEquals(2, r.status(), r.output());
        assertEquals(List.of("tierkv: JDK 25 or newer required, JAVA_HOME=" + home + " is 17.0.2"),
                r.output().lines().toList());
    }

    /**
     * A {@code JAVA_HOME} with no {@code bin/java} is refused by name.
     *
     * @param home an empty directory
     * @throws Exception on failure
     */
    @Test
    void aJavaHomeWithoutJavaIsRefused(@TempDir Path home) throws Exception {
        Result r = launch(home);
        assertEquals(2, r.status(), r.output());
        assertEquals(List.of("tierkv: JDK 25 or newer required, JAVA_HOME=" + home + " has no bin/java"),
                r.output().lines().toList());
    }
}
