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
 * HOST is a name, an IPv4 address or a bracketed IPv6 address ({@code [::1]}); PORT is decimal
 * digits only, in [1, 65535]. Authentication ({@code USER:PASSWORD@}), TLS ({@code rediss://}),
 * database numbers or other paths ({@code /3}) and URL options ({@code ?...}) are not supported
 * by this version: such a URL is refused with a message that says so. A message never repeats
 * a user name or password: it shows {@code ***} in their place.
 *
 * @param cluster whether the URL names a cluster
 * @param nodes   the server (standalone) or the seeds (cluster), at least one
 */
record RemoteEndpoints(boolean cluster, List<Node> nodes) {

    /** Scheme of a standalone server. */
    static final String STANDALONE_SCHEME = "redis://";
    /** Scheme of a cluster. */
    static final String CLUSTER_SCHEME = "redis-cluster://";
    /** Scheme of a standalone server over TLS, which this version does not support. */
    static final String TLS_SCHEME = "rediss://";
    /** What a URL must look like. */
    private static final String SHAPES = "redis://HOST:PORT or redis-cluster://HOST:PORT[,HOST:PORT...]";
    /** Most digits of a port. */
    private static final int MAX_PORT_DIGITS = 5;

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
        if (hasScheme(url, CLUSTER_SCHEME)) { // schemes are case-insensitive (RFC 3986, 3.1)
            cluster = true;
            rest = url.substring(CLUSTER_SCHEME.length());
        } else if (hasScheme(url, STANDALONE_SCHEME)) {
            cluster = false;
            rest = url.substring(STANDALONE_SCHEME.length());
        } else if (hasScheme(url, TLS_SCHEME)) {
            throw unsupported(url, "TLS (" + TLS_SCHEME + "); expected " + SHAPES);
        } else {
            throw bad(url, SHAPES);
        }
        if (rest.contains("@")) {
            throw unsupported(url, "a user name or password (AUTH); expected HOST:PORT with no 'USER:PASSWORD@'");
        }
        int query = rest.indexOf('?');
        if (query >= 0) {
            throw unsupported(url, "URL options (?..., not shown: they may hold a password)");
        }
        int path = rest.indexOf('/');
        if (path >= 0) {
            throw unsupported(url, "a database number or path, got '" + rest.substring(path)
                    + "' (the store uses database 0); expected HOST:PORT");
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

    private static boolean hasScheme(String url, String scheme) {
        return url.regionMatches(true, 0, scheme, 0, scheme.length());
    }

    private static Node node(String url, String part) {
        int colon = part.lastIndexOf(':');
        if (colon <= 0 || colon == part.length() - 1) {
            throw bad(url, "HOST:PORT, got '" + part + "'");
        }
        String host = part.substring(0, colon);
        boolean bracketed = host.startsWith("[") && host.endsWith("]");
        if (bracketed) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.isEmpty() || host.contains("[") || host.contains("]") || (!bracketed && host.contains(":"))) {
            throw bad(url, "a host name or address (an IPv6 address in brackets, [::1]), got '"
                    + part.substring(0, colon) + "'");
        }
        String digits = part.substring(colon + 1);
        // Integer.parseInt alone would take '+80' and non-ASCII digits
        if (!digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw bad(url, "a port in [1, 65535], digits only, got '" + digits + "'");
        }
        int port = digits.length() > MAX_PORT_DIGITS ? -1 : Integer.parseInt(digits);
        if (port < 1 || port > 65535) {
            throw bad(url, "a port in [1, 65535], got " + digits);
        }
        return new Node(host, port);
    }

    private static IllegalArgumentException bad(String url, String expected) {
        return new IllegalArgumentException("url: " + shown(url) + " (expected " + expected + ")");
    }

    private static IllegalArgumentException unsupported(String url, String what) {
        return new IllegalArgumentException("url: " + shown(url) + " (not supported: " + what + ")");
    }

    /**
     * The URL as a message may show it: a user name and password, if any, and URL options (which
     * may carry a password too), replaced by {@code ***}.
     */
    private static String shown(String url) {
        int query = url.indexOf('?');
        if (query >= 0) {
            url = url.substring(0, query) + "?***";
        }
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');
        return scheme < 0 || at < scheme ? url : url.substring(0, scheme + 3) + "***" + url.substring(at);
    }
}
