package io.tierkv.remote;

/**
 * The server could not be reached when the store opened (refused, timed out, not a cluster where
 * the URL says one). Once open, the store never throws for the server's faults: they become
 * counted misses and dropped writes.
 */
public final class RemoteUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String url;
    private final String reason;

    /**
     * An exception for a URL.
     *
     * @param url   the URL the store tried
     * @param cause what Lettuce reported
     */
    public RemoteUnavailableException(String url, Throwable cause) {
        super("remote store unavailable at " + url + ": " + reason(cause), cause);
        this.url = url;
        this.reason = reason(cause);
    }

    /**
     * {@return Lettuce's message and, when it differs, its root cause's: "Unable to connect to
     * 127.0.0.1/&lt;unresolved&gt;:6399" alone hides that the connection was refused}
     */
    private static String reason(Throwable cause) {
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String top = String.valueOf(cause.getMessage());
        String bottom = root.getMessage();
        return root == cause || bottom == null || top.contains(bottom) ? top : top + ": " + bottom;
    }

    /** {@return why, without the URL: the client's message and its root cause's} */
    public String reason() {
        return reason;
    }

    /** {@return the URL the store tried} */
    public String url() {
        return url;
    }
}
