package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code tierkv jlama} is registered (module jlama on the class path) and refuses bad usage with 2. */
class JlamaSubcommandTest {

    private static int run(StringWriter out, StringWriter err, String... args) {
        CommandLine cl = TierKvCli.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
    }

    @Test
    void helpListsJlamaAndBadUsageExitsTwo() {
        StringWriter out = new StringWriter();
        assertEquals(0, run(out, new StringWriter(), "--help"));
        assertTrue(out.toString().contains("jlama"), out.toString());
        StringWriter err = new StringWriter();
        assertEquals(2, run(new StringWriter(), err, "jlama", "--prompt", "x"));
        assertTrue(err.toString().contains("--model-dir"), err.toString());
        err = new StringWriter();
        assertEquals(2, run(new StringWriter(), err, "jlama", "--model-dir", "no-such-dir", "--prompt", "x"));
        assertTrue(err.toString().contains("no-such-dir"), err.toString());
    }
}
