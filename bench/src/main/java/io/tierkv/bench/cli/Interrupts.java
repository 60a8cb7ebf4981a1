package io.tierkv.bench.cli;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What an interrupted {@code tierkv} (SIGINT, SIGTERM) does before the JVM halts. The JVM runs
 * shutdown hooks on another thread while the command's thread goes on; the hook installed by
 * {@link #install()}:
 * <ol>
 *   <li>sets {@link #requested()}, which {@code replay} and {@code soak} poll between requests
 *       (between sleeps for soak): they stop, close their managers, end the progress line and
 *       print the partial summary, marked as such;</li>
 *   <li>waits (at most {@value #GRACE_SECONDS} s) until the command has returned
 *       ({@link #finished()}), if the command said it stops on request ({@link #cooperate()});</li>
 *   <li>deletes every temporary directory made through {@link #createTempDirectory} and not yet
 *       deleted (a command that does not stop, or did not in time, leaves none behind).</li>
 * </ol>
 * The exit status of an interrupted run is the JVM's: 130 for SIGINT, 143 for SIGTERM. Without {@link #install()}
 * (tests calling {@link TierKvCli#execute}) nothing is hooked and {@link #requested()} stays false.
 */
final class Interrupts {

    /** The most seconds the hook waits for a cooperating command to print its partial summary. */
    static final int GRACE_SECONDS = 10;

    private static final Set<Path> TEMP_DIRS = ConcurrentHashMap.newKeySet();
    private static final CountDownLatch FINISHED = new CountDownLatch(1);
    private static volatile boolean requested;
    private static volatile boolean cooperative;
    @GuardedBy("Interrupts.class") private static boolean installed;

    private Interrupts() {
    }

    /** Installs the shutdown hook, once per JVM (from {@link TierKvCli#main}). */
    static synchronized void install() {
        if (!installed) {
            installed = true;
            Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().name("tierkv-shutdown")
                    .unstarted(Interrupts::onShutdown));
        }
    }

    /**
     * Whether the JVM is shutting down (an interrupt): a cooperating command stops at its next
     * check.
     *
     * @return true once the hook has run
     */
    static boolean requested() {
        return requested;
    }

    /** Says that the running command polls {@link #requested()} and returns soon after it is set. */
    static void cooperate() {
        cooperative = true;
    }

    /** Says that the command has returned: its summary is printed and its directories deleted. */
    static void finished() {
        FINISHED.countDown();
    }

    /**
     * Creates a temporary directory that an interrupt deletes if the command has not.
     *
     * @param prefix the name's prefix, for example {@code tierkv-replay-}
     * @return the directory
     * @throws IOException if it cannot be created
     */
    static Path createTempDirectory(String prefix) throws IOException {
        Path dir = Files.createTempDirectory(prefix);
        TEMP_DIRS.add(dir);
        return dir;
    }

    /**
     * Deletes a directory tree made by {@link #createTempDirectory}; null is ignored.
     *
     * @param dir the directory
     */
    static void deleteTempDirectory(Path dir) {
        if (dir != null) {
            Replayer.deleteTree(dir);
            TEMP_DIRS.remove(dir);
        }
    }

    private static void onShutdown() {
        requested = true;
        if (cooperative) {
            try {
                FINISHED.await(GRACE_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (Path dir : TEMP_DIRS) {
            Replayer.deleteTree(dir);
        }
    }
}
