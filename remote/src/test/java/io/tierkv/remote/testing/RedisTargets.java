package io.tierkv.remote.testing;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The servers a test class runs against: the URLs {@code .ci/run} exports
 * ({@code TIERKV_REDIS_URL}, {@code TIERKV_REDIS_CLUSTER_URL}) if set, else servers this JVM
 * starts itself if {@code redis-server} is on the PATH, else the test is skipped; under
 * {@code CI=true} a missing server fails instead. Public for the other modules' tests (the
 * test-jar).
 */
public final class RedisTargets implements AutoCloseable {

    private final String url;
    private final List<RedisProcess> owned;

    private RedisTargets(String url, List<RedisProcess> owned) {
        this.url = url;
        this.owned = owned;
    }

    /** {@return the URL to give {@link io.tierkv.remote.RemoteOptions}} */
    public String url() {
        return url;
    }

    /** {@return the servers this JVM started (empty when an exported URL is used)} */
    public List<RedisProcess> owned() {
        return owned;
    }

    /**
     * A standalone server.
     *
     * @return the target
     * @throws IOException if a server cannot be started
     */
    public static RedisTargets standalone() throws IOException {
        String env = System.getenv("TIERKV_REDIS_URL");
        if (env != null && !env.isBlank()) {
            return new RedisTargets(env, List.of());
        }
        requireInstalled();
        return new RedisTargets(null, List.of(RedisProcess.start(false))).withOwnUrl();
    }

    /**
     * A server this JVM owns (fault tests signal and kill it), even when a URL is exported.
     *
     * @return the running server
     * @throws IOException if it cannot be started
     */
    public static RedisProcess ownStandalone() throws IOException {
        requireInstalled();
        return RedisProcess.start(false);
    }

    /**
     * A 3-node cluster with no replicas.
     *
     * @return the target
     * @throws IOException if the cluster cannot be created
     * @throws InterruptedException if interrupted while waiting for it
     */
    public static RedisTargets cluster() throws IOException, InterruptedException {
        String env = System.getenv("TIERKV_REDIS_CLUSTER_URL");
        if (env != null && !env.isBlank()) {
            return new RedisTargets(env, List.of());
        }
        requireInstalled();
        List<RedisProcess> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                nodes.add(RedisProcess.start(true));
            }
            List<String> cmd = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
            for (RedisProcess n : nodes) {
                cmd.add("127.0.0.1:" + n.port());
            }
            cmd.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
            Process create = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String log = new String(create.getInputStream().readAllBytes());
            if (!create.waitFor(60, TimeUnit.SECONDS) || create.exitValue() != 0) {
                throw new IOException("redis-cli --cluster create failed: " + log);
            }
            waitClusterOk(nodes);
            StringBuilder url = new StringBuilder("redis-cluster://");
            for (int i = 0; i < nodes.size(); i++) {
                url.append(i == 0 ? "" : ",").append("127.0.0.1:").append(nodes.get(i).port());
            }
            return new RedisTargets(url.toString(), List.copyOf(nodes));
        } catch (IOException | InterruptedException | RuntimeException e) {
            for (RedisProcess n : nodes) {
                n.close();
            }
            throw e;
        }
    }

    private static void waitClusterOk(List<RedisProcess> nodes) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (RedisProcess n : nodes) {
            while (true) {
                Process info = new ProcessBuilder("redis-cli", "-p", Integer.toString(n.port()), "cluster", "info")
                        .redirectErrorStream(true).start();
                String out = new String(info.getInputStream().readAllBytes());
                info.waitFor();
                if (out.contains("cluster_state:ok")) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new IOException("cluster not ok on port " + n.port() + ": " + out);
                }
                Thread.sleep(50);
            }
        }
    }

    private RedisTargets withOwnUrl() {
        return new RedisTargets(owned.getFirst().url(), owned);
    }

    private static void requireInstalled() {
        if (RedisProcess.installed()) {
            return;
        }
        String why = "redis-server is not on the PATH (apt-get install redis-server) and TIERKV_REDIS_URL is unset";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            fail(why + " (CI=true: .ci/run installs it and exports the URLs)");
        }
        abort(why);
    }

    /** Stops the servers this JVM started. */
    @Override
    public void close() throws IOException, InterruptedException {
        for (RedisProcess p : owned) {
            p.close();
        }
    }
}
