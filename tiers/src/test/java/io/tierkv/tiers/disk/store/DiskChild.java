package io.tierkv.tiers.disk.store;

import io.tierkv.core.error.DiskFullException;
import io.tierkv.core.testing.ChildJava;
import io.tierkv.tiers.disk.DiskOptions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The child JVM of the crash and disk-full tests: opens a disk tier, does one scenario, prints
 * what it did on stdout, one fact per line, so the parent knows what was acknowledged before it
 * kills this process with SIGKILL ({@link Process#destroyForcibly()}).
 *
 * <pre>
 * DiskChild spill DIR SEGMENT_BYTES BUDGET_BYTES FROM TO close|hang [ephemeral]
 *     persistent tier (not persistent with "ephemeral"); puts keys [FROM, TO) printing "SPILLED k"
 *     after each; then closes and exits ("CLOSED"), or prints "HANG" and waits to be killed
 * DiskChild fill DIR SEGMENT_BYTES BUDGET_BYTES
 *     persistent tier on a small file system: puts until DiskFullException ("FULL k n"),
 *     verifies every stored key ("VERIFIED n"), evicts half ("EVICTED n"), puts again until 8 more
 *     were stored ("RESUMED n"), closes ("CLOSED")
 * </pre>
 * Keys and contents are those of {@link DiskTestSupport}. Any failure prints "FAILED ..." and
 * exits 2.
 */
public final class DiskChild {

    private DiskChild() {}

    /**
     * Runs one scenario.
     *
     * @param args see the class comment
     * @throws Exception never on purpose: failures print "FAILED" and exit 2
     */
    public static void main(String[] args) throws Exception {
        try {
            switch (args[0]) {
                case "spill" -> spill(args);
                case "fill" -> fill(args);
                default -> throw new IllegalArgumentException("unknown scenario " + args[0]);
            }
        } catch (Throwable t) {
            System.out.println("FAILED " + t);
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(2);
        }
    }

    private static DiskOptions options(String[] args) {
        return DiskOptions.at(Path.of(args[1])).withSegmentBytes(Long.parseLong(args[2]))
                .withBudgetBytes(Long.parseLong(args[3])).withLowSpaceWarnBytes(0)
                .withPersistent(!(args.length > 7 && args[7].equals("ephemeral")));
    }

    private static void spill(String[] args) throws InterruptedException {
        int from = Integer.parseInt(args[4]);
        int to = Integer.parseInt(args[5]);
        DiskTier tier = DiskTier.open(options(args), DiskTestSupport.LAYOUT);
        try (Arena arena = Arena.ofConfined()) {
            for (int k = from; k < to; k++) {
                if (!DiskTestSupport.put(tier, arena, k)) {
                    throw new IllegalStateException("put " + k + " declined");
                }
                System.out.println("SPILLED " + k);
            }
        }
        if (args[6].equals("close")) {
            tier.close();
            System.out.println("CLOSED");
            return;
        }
        System.out.println("HANG");
        System.out.flush();
        Thread.sleep(TimeUnit.MINUTES.toMillis(5));
        throw new IllegalStateException("was not killed within 5 minutes");
    }

    private static void fill(String[] args) {
        DiskTier tier = DiskTier.open(options(args), DiskTestSupport.LAYOUT);
        List<Integer> stored = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            int k = 0;
            while (true) {
                try {
                    DiskTestSupport.put(tier, arena, k);
                } catch (DiskFullException e) {
                    System.out.println("FULL " + k + " " + tier.blockCount() + " " + e.getMessage());
                    break;
                }
                stored.add(k++);
                if (k > 100_000) {
                    throw new IllegalStateException("never ran out of space");
                }
            }
            int verified = 0;
            for (int key : stored) {
                if (tier.contains(DiskTestSupport.hi(key), DiskTestSupport.lo(key))) {
                    if (!DiskTestSupport.getAndVerify(tier, arena, key)) {
                        throw new IllegalStateException("key " + key + " indexed but not readable");
                    }
                    verified++;
                }
            }
            if (verified != tier.blockCount()) {
                throw new IllegalStateException("verified " + verified + " of " + tier.blockCount());
            }
            System.out.println("VERIFIED " + verified);
            // a failed spill must not leave a half-made segment behind
            tier.checkInvariants();
            int evicted = tier.maintenance().evict(tier.blockCount() / 2);
            System.out.println("EVICTED " + evicted);
            int resumed = 0;
            while (resumed < 8) {
                DiskTestSupport.put(tier, arena, k++);
                resumed++;
            }
            for (int key = k - 8; key < k; key++) {
                if (!DiskTestSupport.getAndVerify(tier, arena, key)) {
                    throw new IllegalStateException("resumed key " + key + " not readable");
                }
            }
            tier.checkInvariants();
            System.out.println("RESUMED " + resumed);
        }
        tier.close();
        System.out.println("CLOSED");
    }

    /** The children's {@code java.io.tmpdir}, made on first use and deleted when this JVM exits. */
    private static final class ChildTmp {
        static final Path DIR = create();

        private static Path create() {
            try {
                Path dir = java.nio.file.Files.createTempDirectory("tierkv-diskchild-");
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    try (Stream<Path> walk = java.nio.file.Files.walk(dir)) {
                        walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                    } catch (IOException e) {
                        // best effort: a temporary directory
                    }
                }));
                return dir;
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    /** A running child and the lines it printed. */
    static final class Running implements AutoCloseable {
        final Process process;
        final BufferedReader out;
        final List<String> lines = new ArrayList<>();

        Running(Process process) {
            this.process = process;
            this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        }

        /** Reads lines until one starts with {@code prefix}; fails on FAILED or end of output. */
        String awaitLine(String prefix) throws IOException {
            String line;
            while ((line = out.readLine()) != null) {
                lines.add(line);
                if (line.startsWith(prefix)) {
                    return line;
                }
                if (line.startsWith("FAILED")) {
                    StringBuilder rest = new StringBuilder(line);
                    String more;
                    while ((more = out.readLine()) != null) {
                        rest.append('\n').append(more);
                    }
                    throw new AssertionError("child failed: " + rest);
                }
            }
            throw new AssertionError("child ended before printing " + prefix + "; output " + lines);
        }

        /** Waits for a normal exit and returns its status. */
        int waitFor() throws InterruptedException, IOException {
            while (out.readLine() != null) {
                // drain
            }
            if (!process.waitFor(2, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new AssertionError("child did not exit");
            }
            return process.exitValue();
        }

        /** SIGKILL, then wait for the process to be gone. */
        void kill() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(1, TimeUnit.MINUTES);
        }

        @Override
        public void close() {
            if (process.isAlive()) {
                process.destroyForcibly();
            }
        }
    }

    /**
     * Starts a child JVM with this JVM's java binary, paths and test JVM flags ({@link ChildJava}).
     *
     * @param args the child's arguments
     * @return the running child; stderr goes to this JVM's stderr
     * @throws IOException if it cannot start
     */
    static Running start(String... args) throws IOException {
        // lz4-java extracts its native library into java.io.tmpdir and deletes it at exit, which a
        // child killed with SIGKILL never reaches: the children share one directory that this JVM
        // deletes when it exits, so no liblz4-java-*.so is left in the system's temp directory.
        // ChildJava: this JVM's access flags (the build's tierkv.test.jvm.flags) and paths (the
        // module path with these test classes patched into io.tierkv.tiers, as surefire runs them).
        List<String> cmd = ChildJava.command(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1",
                "-Djava.io.tmpdir=" + ChildTmp.DIR), DiskChild.class, args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        return new Running(pb.start());
    }
}
