package io.tierkv.core.error;

import java.nio.file.Path;

/**
 * A disk tier refused its directory before touching a file in it: another manager holds it, or it
 * holds records this tier must not read or delete (another layout, block hash key or format
 * version; a persistent tier's records under a tier that is not persistent, which would delete
 * them). Nothing in the directory was changed. A subclass of {@link IllegalStateException}, which
 * these refusals were before it existed, so that a caller can tell a refused directory (a
 * configuration to fix) from a failure of the tier itself.
 */
public final class DirectoryRefusedException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /** The directory; a {@link Path} is not serializable, so it is kept as its string form. */
    private final String directory;

    /**
     * Creates the exception.
     *
     * @param directory the directory refused
     * @param message   what it holds and what to do, naming the directory
     */
    public DirectoryRefusedException(Path directory, String message) {
        super(message);
        this.directory = directory.toString();
    }

    /** {@return the directory refused, as given to the tier} */
    public Path directory() {
        return Path.of(directory);
    }
}
