package io.tierkv.remote;

import java.util.ArrayList;
import java.util.List;

/**
 * Where the store connects, parsed from {@link RemoteOptions#url()}:
 * <ul>
 * <li>{@code redis://HOST:PORT}: one standalone server;
 * <li>{@code redis-cluster://HOST:PORT[,HOST:PORT...]}: a Redis/Valkey cluster, reached through
 *     these seed nodes (one is enough; the client discovers the others).
 * </ul>
 * HOST is a name, an IPv4 address or a bracketed IPv6 address ({@code [::1]}); PORT is in
 * [1, 65535]. Authentication, TLS and database numbers are not supported by this version.
 *
 * @param cluster whether the URL names a cluster
 * @param nodes   the server (standalone) or the seeds (cluster), at least one
 */
record RemoteEndpoints(boolean cluster, List<Node> nodes) {

    /** Scheme of a standalone server. */
    static final String STANDALONE_SCHEME = "redis://";
    /** Scheme of a cluster. */
    static final String CLUSTER_SCHEME = "redis-cluster://";

    /**
     * One server.
     *
     * @param host host name or address (IPv6 without brackets)
     * @param port TCP port
     */
    record Node(String host, int port) {}

    /** Copies the list. */
    RemoteEndpoints {
        nodes = List.copyOf(nodes);
    }

    /**
     * Parses a URL.
     *
     * @param url the URL
     * @return the endpoints
     * @throws IllegalArgumentException naming {@code url}, its value and what was expected
     */
    static RemoteEndpoints parse(String url) {
        if (url == null) {
            throw bad("null", "a URL");
        }
        boolean cluster;
        String rest;
        if (url.startsWith(CLUSTER_SCHEME)) {
            cluster = true;
            rest = url.substring(CLUSTER_SCHEME.length());
        } else if (url.startsWith(STANDALONE_SCHEME)) {
            cluster = false;
            rest = url.substring(STANDALONE_SCHEME.length());
        } else {
            throw bad(url, "redis://HOST:PORT or redis-cluster://HOST:PORT[,HOST:PORT...]");
        }
        List<Node> nodes = new ArrayList<>();
        for (String part : rest.split(",", -1)) {
            nodes.add(node(url, part));
        }
        if (!cluster && nodes.size() != 1) {
            throw bad(url, "one HOST:PORT after redis://; use redis-cluster:// for several nodes");
        }
        return new RemoteEndpoints(cluster, nodes);
    }

    private static Node node(String url, String part) {
        int colon = part.lastIndexOf(':');
        if (colon <= 0 || colon == part.length() - 1) {
            throw bad(url, "HOST:PORT, got '" + part + "'");
        }
        String host = part.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.isEmpty() || host.contains("/") || host.contains("@") || host.contains("[") || host.contains("]")
                || host.contains("?")) {
            throw bad(url, "a host name or address, got '" + part.substring(0, colon) + "'");
        }
        int port;
        try {
            port = Integer.parseInt(part.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw bad(url, "a port in [1, 65535], got '" + part.substring(colon + 1) + "'");
        }
        if (port < 1 || port > 65535) {
            throw bad(url, "a port in [1, 65535], got " + port);
        }
        return new Node(host, port);
    }

    private static IllegalArgumentException bad(String url, String expected) {
        return new IllegalArgumentException("url: " + url + " (expected " + expected + ")");
    }
}
