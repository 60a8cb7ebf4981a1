package io.tierkv.tiers.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.testing.ChildJava;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's "Using it from a runtime" is a test (STYLE.md item 19; issue 16, item 2): its Java
 * block is {@link UsingTierKv} verbatim, which runs here in this JVM and, with TierKV's modules on
 * the module path and the README's flags for it, in a child JVM.
 */
class ReadmeSnippetTest {

    private static final Path README = Path.of("../README.md");
    private static final Path EXAMPLE = Path.of("src/test/java/io/tierkv/tiers/readme/UsingTierKv.java");
    private static final String SECTION = "## Using it from a runtime";
    private static final String MODULE_PATH_SECTION = "### On the module path";
    private static final String MARKER = "// verbatim: ReadmeSnippetTest compares the two and runs it.";

    @Test
    void theReadmeShowsThisExampleVerbatim() throws IOException {
        String example = Files.readString(EXAMPLE);
        int marker = example.indexOf(MARKER);
        assertTrue(marker > 0, "marker missing in " + EXAMPLE);
        String region = example.substring(example.indexOf('\n', marker) + 1);
        assertEquals(region, fencedBlock(Files.readString(README), SECTION, "java"),
                "README.md's block under '" + SECTION + "' must be " + EXAMPLE + " after the marker line");
    }

    @Test
    void theExampleFindsTheFullBlocksOfTheSecondRequestCached(@TempDir Path dir) throws IOException {
        int[] prompt = new int[40];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = 1000 + i;
        }
        assertEquals(32, UsingTierKv.serveTwice(prompt, dir), "two full blocks of 16 tokens of 40");
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(List.of(), left.toList(), "a tier that is not persistent deletes its files");
        }
    }

    @Test
    void theExampleRunsWithTierKvOnTheModulePathAndTheReadmeFlags() throws Exception {
        Result r = onModulePath(UsingTierKv.class.getName());
        assertEquals(0, r.status(), r.output());
        assertTrue(r.output().contains("cached 32 of 40 tokens"), r.output());
        assertQuiet(r.output());
    }

    @Test
    void aPersistentDiskTierRecoversOnTheModulePathWithTheReadmeFlags(@TempDir Path dir) throws Exception {
        Result r = onModulePath(PersistentRestart.class.getName(), dir.resolve("d").toString());
        assertEquals(0, r.status(), r.output());
        assertTrue(r.output().contains("run 0 cached 0") && r.output().contains("run 1 cached 64"), r.output());
        assertTrue(Files.exists(dir.resolve("d").resolve("deletions.journal")), "persistent: the journal stays");
        assertQuiet(r.output());
    }

    private static void assertQuiet(String output) {
        String printed = output.substring(0, output.lastIndexOf("\n(command: "));
        assertFalse(printed.contains("restricted method") || printed.contains("--enable-native-access")
                || printed.contains("Exception") || printed.contains("IllegalAccess"), output);
    }

    /** What a child printed (stdout and stderr together) and its status. */
    private record Result(int status, String output) {
    }

    /**
     * Runs a main class of this module's tests (class path: {@code io.tierkv.tiers.readme} is not a
     * package of the module) against TierKV's modules and their dependencies on the module path,
     * with the flags of the README's module-path command.
     */
    private static Result onModulePath(String mainClass, String... args) throws IOException, InterruptedException {
        Path testClasses = Path.of("target/test-classes").toAbsolutePath();
        List<String> modules = new ArrayList<>();
        // TierKV's modules are on this JVM's module path (surefire runs the tests there), their
        // dependencies on it or on the class path: all go on the child's module path
        for (String entry : ChildJava.pathEntries()) {
            Path p = Path.of(entry).toAbsolutePath();
            String name = p.getFileName().toString();
            boolean test = name.equals("test-classes") || name.endsWith("-tests.jar") || name.startsWith("junit-")
                    || name.startsWith("opentest4j-") || name.startsWith("apiguardian-");
            if (!test && Files.exists(p)) {
                modules.add(p.toString());
            }
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(ChildJava.java());
        cmd.addAll(readmeModulePathFlags());
        cmd.addAll(List.of("-Xmx512m", "--module-path", String.join(File.pathSeparator, modules),
                "--add-modules=io.tierkv.tiers", "-cp", testClasses.toString(), mainClass));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("child JVM timed out: " + cmd);
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8) + "\n(command: " + cmd + ")");
    }

    /** {@return the flags of the README's module-path command: its {@code --x=y} options} */
    private static List<String> readmeModulePathFlags() throws IOException {
        String block = fencedBlock(Files.readString(README), MODULE_PATH_SECTION, "sh").replace("\\\n", " ");
        List<String> flags = Stream.of(block.split("\\s+")).filter(t -> t.startsWith("--") && t.contains("="))
                .toList();
        assertTrue(flags.size() >= 4, "flags of the README's module-path command: " + flags);
        return flags;
    }

    /**
     * The first fenced block of a language after a heading line, before the next heading of that
     * level or above.
     *
     * @param readme   the text
     * @param heading  the heading line, for example {@code ## Using it from a runtime}
     * @param language the fence's language, for example {@code java}
     * @return the block's text, each line ending with a newline, without the fences
     */
    static String fencedBlock(String readme, String heading, String language) {
        List<String> lines = readme.lines().toList();
        int level = heading.indexOf(' ');
        int i = lines.indexOf(heading);
        assertTrue(i >= 0, "README.md has no heading '" + heading + "'");
        StringBuilder block = new StringBuilder();
        boolean in = false;
        for (i++; i < lines.size(); i++) {
            String line = lines.get(i);
            if (!in && line.startsWith("#") && line.indexOf(' ') > 0 && line.indexOf(' ') <= level) {
                break;
            }
            if (!in && line.equals("```" + language)) {
                in = true;
            } else if (in && line.equals("```")) {
                return block.toString();
            } else if (in) {
                block.append(line).append('\n');
            }
        }
        throw new AssertionError("README.md has no ```" + language + " block under '" + heading + "'");
    }
}
