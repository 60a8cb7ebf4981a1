package io.tierkv.bench.remote;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on loopback in front of a real server that holds every chunk a client sends for a
 * fixed delay before passing it on (replies pass at once): a server that answers every command,
 * only slowly, as a loaded or distant one does. Each connection's two directions run on virtual
 * threads; closing the proxy closes every socket.
 */
final class SlowProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final String targetHost;
    private final int targetPort;
    private final long delayMillis;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    /**
     * Starts listening on a free loopback port.
     *
     * @param targetUrl   the server's {@code redis://host:port} URL
     * @param delayMillis how long each chunk from a client is held, ms
     * @throws IOException if no port can be bound
     */
    SlowProxy(String targetUrl, long delayMillis) throws IOException {
        java.net.URI u = java.net.URI.create(targetUrl);
        this.targetHost = u.getHost();
        this.targetPort = u.getPort();
        this.delayMillis = delayMillis;
        this.listener = new ServerSocket();
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread.ofVirtual().start(this::accept);
    }

    /** {@return the URL that reaches the server through this proxy} */
    String url() {
        return "redis://127.0.0.1:" + listener.getLocalPort();
    }

    private void accept() {
        try {
            while (true) {
                Socket client = listener.accept();
                Socket server = new Socket(targetHost, targetPort);
                sockets.add(client);
                sockets.add(server);
                Thread.ofVirtual().start(() -> pump(client, server, delayMillis));
                Thread.ofVirtual().start(() -> pump(server, client, 0));
            }
        } catch (IOException closed) {
            // the proxy was closed
        }
    }

    private static void pump(Socket from, Socket to, long delayMillis) {
        byte[] buf = new byte[64 << 10];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buf)) > 0) {
                if (delayMillis > 0) {
                    Thread.sleep(delayMillis);
                }
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            // a side closed
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (Socket s : sockets) {
            closeQuietly(s);
        }
    }
}
