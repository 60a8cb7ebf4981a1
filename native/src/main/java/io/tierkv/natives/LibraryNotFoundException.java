package io.tierkv.natives;

/**
 * None of the names or paths tried for a native library could be loaded; the message lists each
 * and the dynamic linker's reason. Checked, because a missing GPU library is an expected outcome on
 * machines without a GPU.
 */
public final class LibraryNotFoundException extends Exception {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message the names tried and why each failed
     */
    public LibraryNotFoundException(String message) {
        super(message);
    }
}
