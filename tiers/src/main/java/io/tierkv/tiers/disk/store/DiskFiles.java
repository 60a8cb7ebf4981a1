package io.tierkv.tiers.disk.store;

import io.tierkv.core.error.DiskFullException;
import io.tierkv.natives.libc.Libc;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * File-system helpers of the disk tier: owner-only creation, space reservation with
 * {@code posix_fallocate} (the only way a full disk may surface: as a {@link DiskFullException}
 * here, never as a SIGBUS on a mapped page), symbolic-link refusal. Stateless and thread-safe.
 */
final class DiskFiles {

    private DiskFiles() {}

    /** {@code EDQUOT}: disk quota exceeded (Linux), treated as a full disk. */
    static final int EDQUOT = 122;

    private static final Set<PosixFilePermission> OWNER_DIR = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> OWNER_FILE = PosixFilePermissions.fromString("rw-------");

    /**
     * Creates the directory with owner-only permissions if absent; refuses a symbolic link or a
     * non-directory.
     *
     * @param dir the directory
     * @return true if it was created by this call
     * @throws IllegalArgumentException if {@code dir} is a symbolic link or not a directory
     * @throws UncheckedIOException if it cannot be created
     */
    static boolean ensureDirectory(Path dir) {
        refuseLinkOrFile(dir);
        if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        Path parent = dir.toAbsolutePath().getParent();
        Path existing = parent;
        while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
            existing = existing.getParent();
        }
        if (existing != null && !Files.isDirectory(existing)) { // an ancestor is a file: nothing to create under it
            throw new IllegalArgumentException("directory: " + dir + " cannot be created: " + existing
                    + " exists and is not a directory");
        }
        try {
            if (parent != null) {
                Files.createDirectories(parent);
            }
        } catch (FileAlreadyExistsException e) { // an ancestor became a file meanwhile
            throw new IllegalArgumentException("directory: " + dir + " cannot be created: " + e.getFile()
                    + " exists and is not a directory");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create disk tier directory " + dir + ": " + reason(e), e);
        }
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_DIR));
            return true;
        } catch (FileAlreadyExistsException e) {
            refuseLinkOrFile(dir); // lost a race with another creator: check what is there now
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create disk tier directory " + dir + ": " + reason(e), e);
        }
    }

    /** Refuses a path that is a symbolic link, or that exists and is not a directory. */
    private static void refuseLinkOrFile(Path dir) {
        if (Files.isSymbolicLink(dir)) {
            throw new IllegalArgumentException("directory: " + dir + " is a symbolic link (refused: the disk tier "
                    + "needs a real directory of its own)");
        }
        if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new IllegalArgumentException("directory: " + dir + " exists and is not a directory");
        }
    }

    /**
     * What went wrong, in words: the file system's reason where it gives one (for example
     * "Permission denied"), else the exception's kind and message.
     *
     * @param e the failure
     * @return one short phrase
     */
    static String reason(IOException e) {
        if (e instanceof java.nio.file.AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof java.nio.file.FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    /**
     * Creates a new, empty file readable and writable by the owner only.
     *
     * @param file the file, which must not exist
     * @throws IOException if it exists or cannot be created
     */
    static void createOwnerOnly(Path file) throws IOException {
        Files.createFile(file, PosixFilePermissions.asFileAttribute(OWNER_FILE));
    }

    /**
     * Reserves {@code bytes} for {@code file} from its first byte with {@code posix_fallocate}.
     *
     * @param file  an existing regular file
     * @param bytes bytes to reserve, {@code > 0}
     * @param dir   the directory whose usable space a {@link DiskFullException} reports
     * @throws DiskFullException on {@code ENOSPC} or {@code EDQUOT}
     * @throws UncheckedIOException for any other error number
     */
    static void reserve(Path file, long bytes, Path dir) {
        int rc = Libc.posixFallocate(file, 0, bytes);
        if (rc == 0) {
            return;
        }
        if (rc == Libc.ENOSPC || rc == EDQUOT) {
            throw new DiskFullException(file.toString(), bytes, usableBytes(dir));
        }
        throw new UncheckedIOException(new IOException("posix_fallocate(" + file + ", 0, " + bytes + ") failed: "
                + Libc.errnoName(rc)));
    }

    /**
     * Usable space of a directory's file system.
     *
     * @param dir a directory
     * @return usable bytes of its file system, or -1 if unknown
     */
    static long usableBytes(Path dir) {
        try {
            return Files.getFileStore(dir).getUsableSpace();
        } catch (IOException e) {
            return -1;
        }
    }

    /**
     * Deletes a file if it exists (not following links); reports nothing.
     *
     * @param file the file
     * @return true if a file was deleted
     */
    static boolean deleteQuietly(Path file) {
        try {
            return Files.deleteIfExists(file);
        } catch (IOException e) {
            return false;
        }
    }
}
