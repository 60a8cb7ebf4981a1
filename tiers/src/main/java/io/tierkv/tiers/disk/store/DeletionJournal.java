package io.tierkv.tiers.disk.store;

import io.tierkv.core.error.DiskFullException;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.function.LongPredicate;
import net.openhft.chronicle.bytes.MappedBytes;

/**
 * The deletion journal of a persistent disk tier: one fixed-capacity file ({@link
 * DiskFormat#JOURNAL_FILE}, layout in {@link DiskFormat}) written through chronicle-bytes
 * {@link MappedBytes}, so an entry is in the page cache (and survives {@code kill -9}) as soon as
 * {@link #append} returns. The file is reserved with {@code posix_fallocate} before it is mapped,
 * so a full disk cannot fault a journal write.
 *
 * <p>Entries are written in the platform's byte order (chronicle-bytes' choice); the disk tier
 * runs only on little-endian platforms, which makes that the little-endian order of {@link
 * DiskFormat}. Not thread-safe: used under the disk tier's lock (chronicle's own single-thread
 * check is switched off for that reason).
 */
final class DeletionJournal implements AutoCloseable {

    private final Path file;
    private final MappedBytes bytes;
    private final long capacity;
    private final long fileBytes;
    private long count;

    private DeletionJournal(Path file, MappedBytes bytes, long capacity, long fileBytes, long count) {
        this.file = file;
        this.bytes = bytes;
        this.capacity = capacity;
        this.fileBytes = fileBytes;
        this.count = count;
    }

    /**
     * Reads the entries of an existing journal.
     *
     * @param file        the journal file
     * @param fingerprint the expected layout fingerprint
     * @return entries as {nonce, offset, hashHi, hashLo} quadruples, empty when the file is absent,
     *     damaged or written for another layout
     * @throws UncheckedIOException if the file exists but cannot be read
     */
    static long[] readEntries(Path file, long fingerprint) {
        if (!Files.isRegularFile(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return new long[0];
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            long size = ch.size();
            if (size < DiskFormat.JOURNAL_HEADER_BYTES) {
                return new long[0];
            }
            ByteBuffer head = readFully(ch, 0, DiskFormat.JOURNAL_HEADER_BYTES);
            if (head.getLong((int) DiskFormat.JRN_MAGIC) != DiskFormat.JOURNAL_MAGIC
                    || head.getInt((int) DiskFormat.JRN_VERSION) != DiskFormat.FORMAT_VERSION
                    || head.getInt((int) DiskFormat.JRN_ENTRY_BYTES) != DiskFormat.JOURNAL_ENTRY_BYTES
                    || head.getLong((int) DiskFormat.JRN_FINGERPRINT) != fingerprint) {
                return new long[0];
            }
            long fits = (size - DiskFormat.JOURNAL_HEADER_BYTES) / DiskFormat.JOURNAL_ENTRY_BYTES;
            long n = Math.max(0, Math.min(head.getLong((int) DiskFormat.JRN_COUNT), Math.min(fits,
                    head.getLong((int) DiskFormat.JRN_CAPACITY))));
            long[] entries = new long[Math.toIntExact(4 * n)];
            if (n > 0) {
                ByteBuffer in = readFully(ch, DiskFormat.JOURNAL_HEADER_BYTES,
                        Math.toIntExact(n * DiskFormat.JOURNAL_ENTRY_BYTES));
                for (int i = 0; i < n; i++) {
                    int at = i * DiskFormat.JOURNAL_ENTRY_BYTES;
                    entries[4 * i] = in.getLong(at);
                    entries[4 * i + 1] = in.getLong(at + 8);
                    entries[4 * i + 2] = in.getLong(at + 16);
                    entries[4 * i + 3] = in.getLong(at + 24);
                }
            }
            return entries;
        } catch (NoSuchFileException e) {
            return new long[0];
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read deletion journal " + file, e);
        }
    }

    /** Reads {@code bytes} at {@code position}, little-endian (the journal's byte order, see the class comment). */
    private static ByteBuffer readFully(FileChannel ch, long position, int bytes) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) {
            if (ch.read(b, position + b.position()) < 0) {
                throw new EOFException("deletion journal ends at " + (position + b.position()) + " B");
            }
        }
        return b;
    }

    /**
     * Writes a fresh journal holding {@code entries} to a temporary file, reserves its space,
     * and renames it over {@link DiskFormat#JOURNAL_FILE} (atomic on POSIX file systems).
     *
     * @param dir         the tier's directory
     * @param fingerprint the layout fingerprint
     * @param capacity    capacity in entries; at least the number of entries given
     * @param entries     {nonce, offset, hashHi, hashLo} quadruples to carry over
     * @return the open journal
     * @throws DiskFullException when its space cannot be reserved
     * @throws UncheckedIOException on other I/O failures
     */
    static DeletionJournal create(Path dir, long fingerprint, long capacity, long[] entries) {
        Path file = dir.resolve(DiskFormat.JOURNAL_FILE);
        Path temp = dir.resolve(DiskFormat.JOURNAL_FILE + DiskFormat.TEMP_SUFFIX);
        long fileBytes = DiskFormat.journalBytes(capacity);
        long n = Math.min(entries.length / 4, capacity);
        try {
            Files.deleteIfExists(temp);
            DiskFiles.createOwnerOnly(temp);
            DiskFiles.reserve(temp, fileBytes, dir);
        } catch (IOException e) {
            DiskFiles.deleteQuietly(temp);
            throw new UncheckedIOException("cannot create deletion journal " + temp, e);
        } catch (RuntimeException e) {
            DiskFiles.deleteQuietly(temp);
            throw e;
        }
        MappedBytes out;
        try {
            out = MappedBytes.singleMappedBytes(temp.toFile(), fileBytes);
        } catch (FileNotFoundException e) {
            DiskFiles.deleteQuietly(temp);
            throw new UncheckedIOException("cannot map deletion journal " + temp, e);
        }
        try {
            out.singleThreadedCheckDisabled(true);
            for (long at = 0; at < DiskFormat.JOURNAL_HEADER_BYTES; at += 8) {
                out.writeLong(at, 0L);
            }
            for (int i = 0; i < n; i++) {
                long at = DiskFormat.JOURNAL_HEADER_BYTES + (long) i * DiskFormat.JOURNAL_ENTRY_BYTES;
                out.writeLong(at, entries[4 * i]);
                out.writeLong(at + 8, entries[4 * i + 1]);
                out.writeLong(at + 16, entries[4 * i + 2]);
                out.writeLong(at + 24, entries[4 * i + 3]);
            }
            out.writeLong(DiskFormat.JRN_MAGIC, DiskFormat.JOURNAL_MAGIC);
            out.writeInt(DiskFormat.JRN_VERSION, DiskFormat.FORMAT_VERSION);
            out.writeInt(DiskFormat.JRN_ENTRY_BYTES, DiskFormat.JOURNAL_ENTRY_BYTES);
            out.writeLong(DiskFormat.JRN_FINGERPRINT, fingerprint);
            out.writeLong(DiskFormat.JRN_CAPACITY, capacity);
            out.writeOrderedLong(DiskFormat.JRN_COUNT, n);
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException | RuntimeException e) {
            out.close();
            DiskFiles.deleteQuietly(temp);
            if (e instanceof RuntimeException r) {
                throw r;
            }
            throw new UncheckedIOException("cannot install deletion journal " + file, (IOException) e);
        }
        return new DeletionJournal(file, out, capacity, fileBytes, n);
    }

    /**
     * Opens the existing journal in place if it already is the journal {@link #create} would
     * write: a regular file of {@link DiskFormat#journalBytes}{@code (capacity)} bytes whose
     * header names this layout, {@code capacity} and {@code count} entries (the entries recovery
     * read and keeps, all of them). Nothing is written, so a restart that changed nothing leaves
     * the file as it was; bytes past the last entry are never read. The file's space is reserved
     * again ({@code posix_fallocate}, a no-op for a file {@link #create} wrote) before it is
     * mapped, so a copy that left holes cannot fault a later write.
     *
     * @param dir         the tier's directory
     * @param fingerprint the layout fingerprint
     * @param capacity    the capacity {@link #create} would be given, in entries
     * @param count       entries the file must hold (all of them kept)
     * @return the open journal, or null where the file differs (then {@link #create} a fresh one)
     * @throws DiskFullException when its space cannot be reserved
     */
    static DeletionJournal reopen(Path dir, long fingerprint, long capacity, long count) {
        Path file = dir.resolve(DiskFormat.JOURNAL_FILE);
        long fileBytes = DiskFormat.journalBytes(capacity);
        try {
            if (!Files.isRegularFile(file, java.nio.file.LinkOption.NOFOLLOW_LINKS) || Files.size(file) != fileBytes) {
                return null;
            }
        } catch (IOException e) {
            return null;
        }
        DiskFiles.reserve(file, fileBytes, dir);
        MappedBytes out;
        try {
            out = MappedBytes.singleMappedBytes(file.toFile(), fileBytes);
        } catch (FileNotFoundException e) {
            return null;
        }
        out.singleThreadedCheckDisabled(true);
        if (out.readLong(DiskFormat.JRN_MAGIC) != DiskFormat.JOURNAL_MAGIC
                || out.readInt(DiskFormat.JRN_VERSION) != DiskFormat.FORMAT_VERSION
                || out.readInt(DiskFormat.JRN_ENTRY_BYTES) != DiskFormat.JOURNAL_ENTRY_BYTES
                || out.readLong(DiskFormat.JRN_FINGERPRINT) != fingerprint
                || out.readLong(DiskFormat.JRN_CAPACITY) != capacity
                || out.readLong(DiskFormat.JRN_COUNT) != count) {
            out.close();
            return null;
        }
        return new DeletionJournal(file, out, capacity, fileBytes, count);
    }

    /**
     * Size of the journal file.
     *
     * @return bytes
     */
    long fileBytes() {
        return fileBytes;
    }

    /**
     * Entries written (including obsolete ones not yet compacted away).
     *
     * @return entries
     */
    long count() {
        return count;
    }

    /**
     * Entries the file holds.
     *
     * @return entries
     */
    long capacity() {
        return capacity;
    }

    /**
     * Records that the record at {@code offset} of the segment with {@code nonce} is deleted.
     *
     * @param nonce  the segment's nonce
     * @param offset the record's offset in the segment
     * @param hashHi the record's block hash, high 64 bits
     * @param hashLo the record's block hash, low 64 bits
     * @return false when the journal is full (nothing written)
     */
    boolean append(long nonce, long offset, long hashHi, long hashLo) {
        if (count >= capacity) {
            return false;
        }
        long at = DiskFormat.JOURNAL_HEADER_BYTES + count * DiskFormat.JOURNAL_ENTRY_BYTES;
        bytes.writeLong(at, nonce);
        bytes.writeLong(at + 8, offset);
        bytes.writeLong(at + 16, hashHi);
        bytes.writeLong(at + 24, hashLo);
        count++;
        bytes.writeOrderedLong(DiskFormat.JRN_COUNT, count);
        return true;
    }

    /**
     * Drops, in place, every entry whose segment nonce no longer exists. A crash in the middle can
     * lose entries, which can only bring back evicted blocks with correct bytes.
     *
     * @param nonceExists whether a segment with this nonce still exists
     * @return entries left
     */
    long compact(LongPredicate nonceExists) {
        long kept = 0;
        for (long i = 0; i < count; i++) {
            long at = DiskFormat.JOURNAL_HEADER_BYTES + i * DiskFormat.JOURNAL_ENTRY_BYTES;
            long nonce = bytes.readLong(at);
            if (!nonceExists.test(nonce)) {
                continue;
            }
            if (kept != i) {
                long to = DiskFormat.JOURNAL_HEADER_BYTES + kept * DiskFormat.JOURNAL_ENTRY_BYTES;
                long offset = bytes.readLong(at + 8);
                long hi = bytes.readLong(at + 16);
                long lo = bytes.readLong(at + 24);
                bytes.writeLong(to, nonce);
                bytes.writeLong(to + 8, offset);
                bytes.writeLong(to + 16, hi);
                bytes.writeLong(to + 24, lo);
            }
            kept++;
        }
        count = kept;
        bytes.writeOrderedLong(DiskFormat.JRN_COUNT, count);
        return count;
    }

    /** Forces the journal to the storage device (msync). */
    void sync() {
        bytes.sync();
    }

    /** Unmaps the journal, keeping the file. */
    @Override
    public void close() {
        bytes.close();
    }

    /** Unmaps and deletes the journal file. */
    void delete() {
        close();
        DiskFiles.deleteQuietly(file);
    }

    @Override
    public String toString() {
        return "DeletionJournal[" + file + ", " + count + "/" + capacity + " entries]";
    }
}
