package io.tierkv.remote;

/**
 * The server could not be reached when the store opened (refused, timed out, not a cluster where
 * the URL says one). Once open, the store never throws for the server's faults: they become
 * counted misses and dropped writes.
 */
public final class RemoteUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String url;

    /**
     * An exception for a URL.
     *
     * @param url   the URL the store tried
     * @param cause what Lettuce reported
     */
    public RemoteUnavailableException(String url, Throwable cause) {
        super("remote store unavailable at " + url + ": " + cause.getMessage(), cause);
        this.url = url;
    }

    /** {@return the URL the store tried} */
    public String url() {
        return url;
    }
}
