package io.tierkv.tiers.disk.store;

import io.tierkv.core.KvLayout;
import io.tierkv.core.error.DirectoryRefusedException;
import io.tierkv.tiers.disk.DiskOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * The disk tier's directory: the file lock that makes one manager its only user, the list of the
 * tier's own files in it (foreign files and symbolic links are left alone), and the preparation
 * at open: refuse or wipe a persistent directory written for another layout, wipe a non-persistent
 * one, write the metadata file.
 *
 * <p>Not thread-safe: used by {@link DiskTier} at open, under its lock, and at close.
 */
final class TierDirectory {

    private static final System.Logger LOG = System.getLogger(DiskTier.class.getName());

    private final Path dir;
    private final FileChannel lockChannel;
    private final FileLock fileLock;
    /** Whether {@link #lock} created the lock file: a refused open then takes it away again. */
    private final boolean createdLockFile;

    private TierDirectory(Path dir, FileChannel lockChannel, FileLock fileLock, boolean createdLockFile) {
        this.dir = dir;
        this.lockChannel = lockChannel;
        this.fileLock = fileLock;
        this.createdLockFile = createdLockFile;
    }

    /**
     * Locks a directory (it exists) for this manager.
     *
     * @param dir the directory
     * @return the locked directory
     * @throws IllegalArgumentException if the lock file is a symbolic link
     * @throws IllegalStateException if another manager, in this JVM or another, holds the lock
     * @throws UncheckedIOException if the lock file cannot be opened or locked
     */
    static TierDirectory lock(Path dir) {
        Path lockFile = dir.resolve(DiskFormat.LOCK_FILE);
        if (Files.isSymbolicLink(lockFile)) {
            throw new IllegalArgumentException("lock file " + lockFile + " is a symbolic link (refused)");
        }
        boolean existed = Files.exists(lockFile, LinkOption.NOFOLLOW_LINKS);
        FileChannel channel;
        try {
            channel = FileChannel.open(lockFile, Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS), PosixFilePermissions.asFileAttribute(
                            PosixFilePermissions.fromString("rw-------")));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open lock file " + lockFile + ": " + DiskFiles.reason(e), e);
        }
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        } catch (IOException e) {
            closeQuietly(channel);
            throw new UncheckedIOException("cannot lock " + lockFile, e);
        }
        if (lock == null) {
            closeQuietly(channel);
            throw new DirectoryRefusedException(dir, "disk tier directory " + dir + " is held by another manager (lock "
                    + lockFile + " is taken); use a directory of its own for each manager");
        }
        return new TierDirectory(dir, channel, lock, !existed);
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // already failing
        }
    }

    /**
     * The directory.
     *
     * @return its path
     */
    Path path() {
        return dir;
    }

    /**
     * Prepares the directory for a tier: a persistent one written for another layout is refused,
     * or wiped when {@link DiskOptions#wipeOnLayoutMismatch()}; a non-persistent one is wiped (the
     * tier's own files only), unless they are another tier's stored records (a persistent tier's,
     * or files whose metadata is missing or damaged), which refuse it; then the metadata file is written, unless it already holds exactly the
     * bytes it would be written with (a restart that changed nothing writes nothing).
     *
     * <p>A persistent directory is also refused, whatever {@code wipeOnLayoutMismatch} says, when
     * its records are keyed by another block hash function or key ({@link KeySpace}: their keys
     * would never be found, and wiping would destroy another deployment's data on a
     * misconfiguration) or were written in another format version.
     *
     * @param options  the options
     * @param layout   the layout
     * @param keySpace the block hash function this tier's keys come from
     * @param crc      a checksum object
     * @return the key space the directory records now: {@code keySpace}, or for a
     *     {@linkplain KeySpace#generated generated} key the one the directory keeps (or a new one)
     * @throws DirectoryRefusedException on a layout mismatch that may not be wiped, a key-space
     *     mismatch, another format version, or a non-persistent tier over stored records
     * @throws UncheckedIOException on I/O failure
     */
    KeySpace prepare(DiskOptions options, KvLayout layout, KeySpace keySpace, CRC32C crc) {
        List<Path> own = ownFiles();
        Path metaFile = dir.resolve(DiskFormat.META_FILE);
        boolean wipe = !options.persistent();
        KeySpace effective = null;
        MemorySegment existing = readMeta(metaFile);
        if (wipe) {
            refuseOthersRecords(own, existing, crc);
            existing = null;
        }
        if (!wipe) {
            effective = checkFormatAndKeySpace(existing, keySpace, crc, own);
            String mismatch = layoutMismatch(existing, own, layout.fingerprint(), crc);
            if (mismatch != null) {
                if (!options.wipeOnLayoutMismatch()) {
                    throw new DirectoryRefusedException(dir, "disk tier directory " + dir + " was written for another layout ("
                            + mismatch + "), this tier's layout is " + layout
                            + "; use another directory or set wipeOnLayoutMismatch");
                }
                LOG.log(System.Logger.Level.WARNING, "wiping disk tier directory {0}: written for another layout ({1})",
                        dir, mismatch);
                wipe = true;
            }
        }
        if (wipe) {
            for (Path p : own) {
                if (!p.getFileName().toString().equals(DiskFormat.LOCK_FILE)) {
                    DiskFiles.deleteQuietly(p);
                }
            }
        }
        effective = effective == null || wipe ? keySpace.withGeneratedKey() : effective;
        writeMeta(metaFile, wipe ? null : existing, layout, effective, !options.persistent(), crc);
        return effective;
    }

    /**
     * For a tier that is not persistent, which deletes its directory's files now and at close:
     * refuses a directory holding any tier file but the lock unless its metadata says a tier that
     * was not persistent wrote them (one that was killed before its close deleted them). Files of
     * a persistent tier, or files whose writer cannot be told (metadata missing or damaged), are
     * someone's stored records.
     */
    private void refuseOthersRecords(List<Path> own, MemorySegment meta, CRC32C crc) {
        boolean ephemeral = meta != null && MetaFile.checkMeta(meta, crc) == DiskFormat.VALID && MetaFile.metaEphemeral(meta);
        if (ephemeral) {
            return;
        }
        for (Path p : own) {
            String name = p.getFileName().toString();
            if (!name.equals(DiskFormat.LOCK_FILE) && !name.endsWith(DiskFormat.TEMP_SUFFIX)) { // temp: a cut-short rewrite
                throw new DirectoryRefusedException(dir, "disk tier directory " + dir + " holds "
                        + (meta == null ? "disk tier files without metadata (" + p.getFileName() + ")"
                                : "a persistent disk tier's records")
                        + ", which this tier, not persistent, would delete; open it persistent"
                        + " (DiskOptions.withPersistent; tierkv jlama --persistent) or use another directory");
            }
        }
    }

    /**
     * Refuses a persistent directory whose metadata names another format version or key space,
     * or that holds tier files while its metadata is missing or damaged (its records' hash function
     * and key cannot be checked: opening it would write a new key over the only record of the old
     * one, a generated key included, and hide every record, uncounted); returns the key space it
     * records, or null for a directory with neither metadata nor other tier files (a new one).
     */
    private KeySpace checkFormatAndKeySpace(MemorySegment meta, KeySpace keySpace, CRC32C crc, List<Path> own) {
        int status = meta == null ? DiskFormat.NO_MAGIC : MetaFile.checkMeta(meta, crc);
        if (status == DiskFormat.BAD_VERSION) { // its checksum holds: written by another format
            throw new DirectoryRefusedException(dir, "disk tier directory " + dir + " was written in format version "
                    + MetaFile.metaVersion(meta) + ", this TierKV reads version " + DiskFormat.FORMAT_VERSION
                    + "; use another directory");
        }
        if (status != DiskFormat.VALID) {
            List<String> files = own.stream().map(p -> p.getFileName().toString())
                    .filter(n -> !n.equals(DiskFormat.LOCK_FILE) && !n.equals(DiskFormat.META_FILE)
                            && !n.endsWith(DiskFormat.TEMP_SUFFIX)).toList(); // a rewrite cut short holds no record
            if (files.isEmpty()) {
                return null; // nothing stored: a new directory, or one whose first open ended early
            }
            throw new DirectoryRefusedException(dir, "disk tier directory " + dir + " holds disk tier files ("
                    + files.getFirst() + (files.size() > 1 ? " and " + (files.size() - 1) + " more" : "")
                    + ") but its metadata file " + DiskFormat.META_FILE + " is "
                    + (meta == null ? "missing" : "damaged (" + DiskFormat.reason(status) + ")")
                    + ": the block hash function and key its records were written with cannot be checked, and"
                    + " opening it would hide them under another key; restore the file, or delete the directory's"
                    + " files to start empty");
        }
        KeySpace stored = MetaFile.metaKeySpace(meta);
        if (!keySpace.admits(stored)) {
            throw new DirectoryRefusedException(dir, "disk tier directory " + dir + " was written with block hash "
                    + (stored == null ? "of an unknown function" : stored.describe()) + ", this manager hashes with "
                    + keySpace.describe() + "; open it with the same hashAlgorithm and hashKey (or"
                    + " generatedHashKey), or use another directory");
        }
        return stored;
    }

    /** The metadata file's bytes, or null if it is absent (or not a regular file). */
    private static MemorySegment readMeta(Path metaFile) {
        if (!Files.isRegularFile(metaFile, LinkOption.NOFOLLOW_LINKS)) {
            return null;
        }
        try {
            return MemorySegment.ofArray(Files.readAllBytes(metaFile));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + metaFile, e);
        }
    }

    /**
     * The tier's own files in the directory: regular files (not links) with the tier's names,
     * sorted by name.
     *
     * @return the paths
     * @throws UncheckedIOException if the directory cannot be listed
     */
    List<Path> ownFiles() {
        List<Path> own = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                String name = p.getFileName().toString();
                if (!DiskFormat.isOwnFileName(name)) {
                    continue;
                }
                if (!Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    LOG.log(System.Logger.Level.WARNING, "leaving {0} alone: named like a disk tier file but not a "
                            + "regular file (a symbolic link?)", p);
                    continue;
                }
                own.add(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list disk tier directory " + dir, e);
        }
        own.sort(null);
        return own;
    }

    /** Describes the foreign layout a persistent directory was written for, or null if it matches. */
    private static String layoutMismatch(MemorySegment meta, List<Path> own, long fingerprint, CRC32C crc) {
        if (meta != null && MetaFile.checkMeta(meta, crc) == DiskFormat.VALID) {
            long fp = MetaFile.metaFingerprint(meta);
            return fp == fingerprint ? null : MetaFile.metaLayoutText(meta) + ", fingerprint " + Long.toHexString(fp);
        }
        // no readable metadata: judge by the segment headers that verify
        for (Path p : own) {
            if (DiskFormat.segmentIdOf(p.getFileName().toString()) < 0) {
                continue;
            }
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
                ByteBuffer head = ByteBuffer.allocate(DiskFormat.SEGMENT_HEADER_BYTES);
                if (ch.read(head, 0) < DiskFormat.SEGMENT_HEADER_BYTES) {
                    continue;
                }
                MemorySegment h = MemorySegment.ofArray(head.array());
                if (SegmentHeaders.checkSegmentHeader(h, crc, DiskFormat.SEGMENT_HEADER_BYTES, fingerprint)
                        == DiskFormat.BAD_FINGERPRINT) {
                    return "segment " + p.getFileName() + " has fingerprint "
                            + Long.toHexString(h.get(DiskFormat.LONG, DiskFormat.SEG_FINGERPRINT));
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + p, e);
            }
        }
        return null;
    }

    /**
     * Writes the metadata file (to a temporary file renamed over it), unless {@code existing},
     * the bytes it holds now (null if none), are already exactly those bytes.
     */
    private void writeMeta(Path metaFile, MemorySegment existing, KvLayout layout, KeySpace keySpace, boolean ephemeral,
            CRC32C crc) {
        Path temp = dir.resolve(DiskFormat.META_FILE + DiskFormat.TEMP_SUFFIX);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment meta = arena.allocate(DiskFormat.META_BYTES);
            MetaFile.writeMeta(meta, crc, layout, keySpace, ephemeral);
            if (existing != null && existing.byteSize() == meta.byteSize() && existing.mismatch(meta) < 0) {
                return; // unchanged
            }
            DiskFiles.deleteQuietly(temp);
            DiskFiles.createOwnerOnly(temp);
            Files.write(temp, meta.toArray(ValueLayout.JAVA_BYTE));
            Files.move(temp, metaFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            DiskFiles.deleteQuietly(temp);
            throw new UncheckedIOException("cannot write " + metaFile, e);
        }
    }

    /**
     * Releases the lock after an open that failed (the directory refused, recovery failed): the
     * lock file goes too if this open created it, so a refused directory is left as it was found.
     */
    void releaseAfterFailedOpen() {
        release(createdLockFile);
    }

    /**
     * Releases the lock and closes its file; a failure is logged (nothing is left to undo).
     *
     * @param deleteFile whether to delete the lock file first (a non-persistent tier leaves
     *                   nothing behind)
     */
    void release(boolean deleteFile) {
        try {
            if (fileLock.isValid()) {
                if (deleteFile) {
                    DiskFiles.deleteQuietly(dir.resolve(DiskFormat.LOCK_FILE));
                }
                fileLock.release();
            }
            lockChannel.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "releasing the lock of " + dir + " failed", e);
        }
    }
}
