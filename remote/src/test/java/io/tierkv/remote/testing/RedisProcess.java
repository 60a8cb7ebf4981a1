package io.tierkv.remote.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real {@code redis-server} this test JVM started on a free loopback port, in a temporary
 * directory, without persistence ({@code --save '' --appendonly no}); stopped by its pid at
 * {@link #close()}. Fault tests pause it ({@code kill -STOP}), resume it and kill and restart it on
 * the same port.
 */
public final class RedisProcess implements AutoCloseable {

    private final int port;
    private final Path dir;
    private final boolean cluster;
    private Process process;

    private RedisProcess(int port, Path dir, boolean cluster) throws IOException {
        this.port = port;
        this.dir = dir;
        this.cluster = cluster;
        start();
    }

    /**
     * Starts a server.
     *
     * @param cluster with {@code --cluster-enabled yes} (its bus port, port + 10000, is free too)
     * @return the running server, answering PING
     * @throws IOException if it does not start within 10 s
     */
    public static RedisProcess start(boolean cluster) throws IOException {
        return new RedisProcess(freePort(), Files.createTempDirectory("tierkv-redis-"), cluster);
    }

    /** {@return whether {@code redis-server} is on the PATH} */
    public static boolean installed() {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String d : path.split(":")) {
            if (Files.isExecutable(Path.of(d, "redis-server"))) {
                return true;
            }
        }
        return false;
    }

    private void start() throws IOException {
        List<String> cmd = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind",
                "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir.toString()));
        if (cluster) {
            cmd.addAll(List.of("--cluster-enabled", "yes", "--cluster-config-file",
                    dir.resolve("nodes.conf").toString(), "--cluster-node-timeout", "5000"));
        }
        process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("server.log").toFile())
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!ping()) {
            if (System.nanoTime() > deadline || !process.isAlive()) {
                throw new IOException("redis-server on port " + port + " did not start: "
                        + Files.readString(dir.resolve("server.log")));
            }
            sleep(20);
        }
    }

    /** {@return the TCP port} */
    public int port() {
        return port;
    }

    /** {@return {@code redis://127.0.0.1:port}} */
    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    /** {@return the server process's pid} */
    public long pid() {
        return process.pid();
    }

    /** Stops the process with SIGSTOP: connections stay open, nothing is answered. */
    public void pause() throws IOException, InterruptedException {
        signal("-STOP");
    }

    /** Resumes a paused process with SIGCONT. */
    public void resume() throws IOException, InterruptedException {
        signal("-CONT");
    }

    /** Kills the process (SIGKILL) and waits for it to exit; its data is gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** Starts the server again on the same port (after {@link #kill()}). */
    public void restart() throws IOException {
        start();
    }

    private void signal(String sig) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", sig, Long.toString(process.pid())).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IOException("kill " + sig + " " + process.pid() + " failed");
        }
    }

    /** {@return whether the server answers PING within 200 ms} */
    public boolean ping() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            s.setSoTimeout(200);
            OutputStream out = s.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();
            byte[] buf = new byte[7];
            int n = in.readNBytes(buf, 0, 7);
            return n == 7 && new String(buf, StandardCharsets.US_ASCII).equals("+PONG\r\n");
        } catch (IOException e) {
            return false;
        }
    }

    /** Stops the process by pid (resuming it first if paused) and deletes its directory. */
    @Override
    public void close() throws IOException, InterruptedException {
        if (process.isAlive()) {
            signal("-CONT");
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** A port whose cluster bus port (+10000) is free as well, below 55536. */
    private static int freePort() throws IOException {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port;
            try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            }
            if (port + 10000 > 65535) {
                continue;
            }
            try (ServerSocket bus = new ServerSocket(port + 10000, 1, java.net.InetAddress.getLoopbackAddress())) {
                return port;
            } catch (IOException busy) {
                // try another
            }
        }
        throw new IOException("no free loopback port pair (p, p + 10000) found");
    }

    public static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
