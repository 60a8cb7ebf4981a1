package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A start prints only what the command says (issue 16, item 6), run as a process with the
 * launcher's JVM flags: no SLF4J provider warnings (slf4j-nop is the command line's provider), no
 * {@code sun.misc.Unsafe} warnings from jffi ({@code --sun-misc-unsafe-memory-access=allow} in
 * {@code tierkv.jvm.flags}), no GPU detection lines at INFO.
 */
class QuietStartCliTest {

    /** Creates the test. */
    QuietStartCliTest() {
    }

    /**
     * A short soak (disk tier with chronicle-bytes and jffi) prints no logging noise.
     *
     * @param tmp the child's temporary directory
     * @throws Exception on failure
     */
    @Test
    void aSoakPrintsNoLoggerOrUnsafeWarnings(@TempDir Path tmp) throws Exception {
        CliProcess.Result r = CliProcess.run(List.of("-Djava.io.tmpdir=" + tmp), "soak", "--duration", "3s",
                "--threads", "2");
        // the verdict is SoakCommandTest's: on a loaded machine a short soak may fail its own checks
        assertTrue(r.output().contains("result: "), r.output());
        for (String noise : List.of("SLF4J", "sun.misc.Unsafe", "WARNING", "INFO", "skipped:")) {
            assertFalse(r.output().contains(noise), noise + " in:\n" + r.output());
        }
    }
}
