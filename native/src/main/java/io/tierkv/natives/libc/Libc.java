package io.tierkv.natives.libc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Checked, segment-based calls into the C library for the disk and host tiers: reserving file
 * space ({@code posix_fallocate}), page-cache advice ({@code madvise}, {@code posix_fadvise}),
 * page residency ({@code mincore}), anonymous memory for block pools ({@code mmap},
 * {@code munmap}), locking memory ({@code mlock}, {@code mlock2}) and the {@code RLIMIT_MEMLOCK} limit.
 *
 * <p>Every method returns the C error number (negated where a count is returned) rather than
 * throwing, so the caller decides what a failure means (a full disk is a
 * {@code DiskFullException} in the disk tier, a refused {@code mlock} is merely unlocked memory). Error numbers are the Linux values; {@link
 * #errnoName(int)} turns one into text for messages.
 *
 * <p>Thread-safety: all methods are stateless and safe to call from any thread. They need native
 * access ({@code --enable-native-access=ALL-UNNAMED} on the class path, or
 * {@code --enable-native-access=io.tierkv.natives} on the module path); without it the JDK warns
 * once (or, under {@code --illegal-native-access=deny}, throws {@link IllegalCallerException}).
 */
public final class Libc {

    private Libc() {}

    /** {@code EPERM}: operation not permitted. */
    public static final int EPERM = 1;
    /** {@code ENOENT}: no such file or directory. */
    public static final int ENOENT = 2;
    /** {@code EINTR}: interrupted system call. */
    public static final int EINTR = 4;
    /** {@code EBADF}: bad file descriptor. */
    public static final int EBADF = 9;
    /** {@code EAGAIN}: resource temporarily unavailable. */
    public static final int EAGAIN = 11;
    /** {@code ENOMEM}: out of memory, or over {@code RLIMIT_MEMLOCK} for {@code mlock}. */
    public static final int ENOMEM = 12;
    /** {@code EACCES}: permission denied. */
    public static final int EACCES = 13;
    /** {@code EISDIR}: is a directory. */
    public static final int EISDIR = 21;
    /** {@code EINVAL}: invalid argument. */
    public static final int EINVAL = 22;
    /** {@code EFBIG}: file too large. */
    public static final int EFBIG = 27;
    /** {@code ENOSPC}: no space left on device, as {@code posix_fallocate} reports a full disk. */
    public static final int ENOSPC = 28;
    /** {@code ESPIPE}: illegal seek (a pipe or FIFO). */
    public static final int ESPIPE = 29;
    /** {@code ENOSYS}: function not implemented. */
    public static final int ENOSYS = 38;
    /** {@code EOPNOTSUPP}: operation not supported (for example by the file system). */
    public static final int EOPNOTSUPP = 95;

    /** {@code MADV_NORMAL}: no special treatment. */
    public static final int MADV_NORMAL = 0;
    /** {@code MADV_RANDOM}: expect random access; read ahead less. */
    public static final int MADV_RANDOM = 1;
    /** {@code MADV_SEQUENTIAL}: expect sequential access; read ahead more. */
    public static final int MADV_SEQUENTIAL = 2;
    /** {@code MADV_WILLNEED}: read the range in now. */
    public static final int MADV_WILLNEED = 3;
    /** {@code MADV_DONTNEED}: the range is not needed soon; drop its pages. */
    public static final int MADV_DONTNEED = 4;
    /** {@code MADV_HUGEPAGE}: back the range with transparent huge pages where possible (Linux). */
    public static final int MADV_HUGEPAGE = 14;
    /** {@code MADV_COLLAPSE}: collapse the range's pages into huge pages now, synchronously (Linux 6.1+). */
    public static final int MADV_COLLAPSE = 25;
    /** Bytes of a transparent huge page on x86-64 (and aarch64 with 4 KiB base pages): 2 MiB. */
    public static final long HUGE_PAGE_BYTES = 2L << 20;

    /** {@code POSIX_FADV_NORMAL}: no special treatment. */
    public static final int POSIX_FADV_NORMAL = 0;
    /** {@code POSIX_FADV_RANDOM}: expect random access. */
    public static final int POSIX_FADV_RANDOM = 1;
    /** {@code POSIX_FADV_SEQUENTIAL}: expect sequential access. */
    public static final int POSIX_FADV_SEQUENTIAL = 2;
    /** {@code POSIX_FADV_WILLNEED}: read the range into the page cache now. */
    public static final int POSIX_FADV_WILLNEED = 3;
    /** {@code POSIX_FADV_DONTNEED}: drop the range from the page cache. */
    public static final int POSIX_FADV_DONTNEED = 4;
    /** {@code POSIX_FADV_NOREUSE}: the data is read once. */
    public static final int POSIX_FADV_NOREUSE = 5;

    private static final class PageSize {
        static final long BYTES = pageSizeFromSysconf();

        private static long pageSizeFromSysconf() {
            long size = libc_h.sysconf(libc_h._SC_PAGESIZE);
            return size > 0 && Long.bitCount(size) == 1 ? size : 4096L;
        }
    }

    /**
     * The page size of this machine ({@code sysconf(_SC_PAGESIZE)}), in bytes; 4096 if sysconf
     * fails.
     *
     * @return bytes per page, a power of two
     */
    public static long pageSizeBytes() {
        return PageSize.BYTES;
    }

    /**
     * Opens {@code file} read-write, reserves {@code [offsetBytes, offsetBytes + lengthBytes)} with
     * {@code posix_fallocate} (so later writes through a mapping cannot fail with SIGBUS for lack
     * of space), and closes it. The file grows if the range ends past its size. {@code EINTR} is
     * retried.
     *
     * @param file an existing regular file
     * @param offsetBytes first byte to reserve, {@code >= 0}
     * @param lengthBytes bytes to reserve, {@code > 0}
     * @return 0, or the error number: {@link #ENOSPC} (28) when the disk is full, {@link #EFBIG},
     *     {@link #EOPNOTSUPP}, ...
     * @throws IllegalArgumentException if the offset is negative or the length not positive
     * @throws UncheckedIOException if the file cannot be opened (wrapping {@link
     *     NoSuchFileException}, {@link AccessDeniedException} or an {@link IOException} that names
     *     the errno)
     */
    public static int posixFallocate(Path file, long offsetBytes, long lengthBytes) {
        Objects.requireNonNull(file, "file");
        if (offsetBytes < 0) {
            throw new IllegalArgumentException("offsetBytes: " + offsetBytes + " (expected >= 0)");
        }
        if (lengthBytes <= 0) {
            throw new IllegalArgumentException("lengthBytes: " + lengthBytes + " (expected > 0)");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(libc_h.CAPTURE_STATE_LAYOUT);
            int fd = openOrThrow(arena, state, file, libc_h.O_RDWR | libc_h.O_CLOEXEC);
            try {
                int rc;
                do {
                    rc = libc_h.posix_fallocate(fd, offsetBytes, lengthBytes);
                } while (rc == EINTR);
                return rc;
            } finally {
                libc_h.close(state, fd);
            }
        }
    }

    /**
     * Gives the kernel advice about a range of the page cache of {@code file} (opened read-only
     * for the call).
     *
     * @param file an existing file
     * @param offset first byte, {@code >= 0}
     * @param len bytes, {@code >= 0}; 0 means to the end of the file
     * @param advice one of the {@code POSIX_FADV_*} constants
     * @return 0, or the error number ({@link #EINVAL} for an unknown advice, {@link #ESPIPE})
     * @throws IllegalArgumentException if offset or len is negative
     * @throws UncheckedIOException if the file cannot be opened
     */
    public static int posixFadvise(Path file, long offset, long len, int advice) {
        Objects.requireNonNull(file, "file");
        if (offset < 0) {
            throw new IllegalArgumentException("offset: " + offset + " (expected >= 0)");
        }
        if (len < 0) {
            throw new IllegalArgumentException("len: " + len + " (expected >= 0)");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(libc_h.CAPTURE_STATE_LAYOUT);
            int fd = openOrThrow(arena, state, file, libc_h.O_RDONLY | libc_h.O_CLOEXEC);
            try {
                return libc_h.posix_fadvise(fd, offset, len, advice);
            } finally {
                libc_h.close(state, fd);
            }
        }
    }

    /**
     * Gives the kernel advice about the pages that hold {@code segment}. madvise needs a
     * page-aligned start: the range used is the segment's start rounded down to a page and its end
     * rounded up, so neighbouring bytes on the same pages get the same advice (which matters only
     * for {@link #MADV_DONTNEED} on private memory: do not use that on a segment that shares pages
     * with live data).
     *
     * @param segment a native segment (for example from {@code FileChannel.map})
     * @param advice one of the {@code MADV_*} constants
     * @return 0, or the errno ({@link #EINVAL}, {@link #ENOMEM} for an unmapped range)
     * @throws IllegalArgumentException if the segment is not native
     * @throws IllegalStateException if the segment's arena is closed
     */
    public static int madvise(MemorySegment segment, int advice) {
        requireNative(segment);
        checkAlive(segment);
        long page = pageSizeBytes();
        long start = segment.address() & -page;
        long end = alignUp(segment.address() + segment.byteSize(), page);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(libc_h.CAPTURE_STATE_LAYOUT);
            int rc = libc_h.madvise(state, MemorySegment.ofAddress(start), end - start, advice);
            return rc == 0 ? 0 : libc_h.errno(state);
        }
    }

    /**
     * Asks the kernel to back memory already touched with transparent huge pages: {@code
     * MADV_HUGEPAGE}, then {@code MADV_COLLAPSE} so that pages already touched (an arena zero-fills
     * what it allocates) are collapsed now rather than by {@code khugepaged} later. The collapse
     * copies every page: the tiers' pools instead take {@link #MADV_HUGEPAGE} alone before their
     * first touch ({@code PoolMemory}), which needs no copy. Best effort: a kernel without
     * THP, or older than 6.1 ({@code MADV_COLLAPSE}), or without free huge pages answers with an
     * error and the pool keeps its base pages. Only whole huge pages inside the segment can be
     * collapsed, so allocate pools {@link #HUGE_PAGE_BYTES}-aligned. Why: a 64 KiB block copy
     * touches 16 base pages, each a TLB miss on a cold block; measured on 2026-11-30 (a 32 MiB
     * pool, random 64 KiB copies from 16 MiB of it): 2.07-2.50 us per copy with huge pages against
     * 2.71-2.92 us without.
     *
     * @param segment a native segment
     * @return 0 if both advices were taken, else the errno of the first that failed
     * @throws IllegalArgumentException if the segment is not native
     * @throws IllegalStateException if the segment's arena is closed
     */
    public static int adviseHugePages(MemorySegment segment) {
        int rc = madvise(segment, MADV_HUGEPAGE);
        return rc != 0 ? rc : madvise(segment, MADV_COLLAPSE);
    }

    /**
     * Counts the pages that hold {@code segment} which are resident in memory ({@code mincore}):
     * for a file mapping, in the page cache, whether or not this mapping has touched them yet.
     * The range is the segment's pages, as for {@link #madvise}.
     *
     * @param segment a native segment (for example a slice of a {@code FileChannel.map} mapping)
     * @return resident pages, in [0, pages of the range], or {@code -errno} ({@code -ENOMEM} for
     *     a range that is not mapped)
     * @throws IllegalArgumentException if the segment is not native
     * @throws IllegalStateException if the segment's arena is closed
     */
    public static long residentPages(MemorySegment segment) {
        requireNative(segment);
        try (Arena arena = Arena.ofConfined()) {
            return residentPages(segment, arena.allocate(residentScratchBytes(segment.byteSize() + pageSizeBytes()), 8));
        }
    }

    /**
     * As {@link #residentPages(MemorySegment)}, with caller memory for the call's errno and page
     * vector instead of an arena per call (for a hot path, such as a check before every disk
     * read). Not thread-safe for one {@code scratch}.
     *
     * @param segment a native segment
     * @param scratch native memory of at least {@link #residentScratchBytes} of the segment's
     *                size plus one page
     * @return resident pages, in [0, pages of the range], or {@code -errno}
     * @throws IllegalArgumentException if a segment is not native or {@code scratch} is too small
     * @throws IllegalStateException if a segment's arena is closed
     */
    public static long residentPages(MemorySegment segment, MemorySegment scratch) {
        requireNative(segment);
        requireNative(scratch);
        checkAlive(segment);
        long page = pageSizeBytes();
        long start = segment.address() & -page;
        long end = alignUp(segment.address() + segment.byteSize(), page);
        long pages = (end - start) / page;
        long stateBytes = libc_h.CAPTURE_STATE_LAYOUT.byteSize();
        if (scratch.byteSize() < stateBytes + pages) {
            throw new IllegalArgumentException("scratch: " + scratch.byteSize() + " bytes (expected >= "
                    + (stateBytes + pages) + " for " + pages + " pages)");
        }
        MemorySegment state = scratch.asSlice(0, stateBytes);
        MemorySegment vec = scratch.asSlice(stateBytes, pages);
        int rc = libc_h.mincore(state, MemorySegment.ofAddress(start), end - start, vec);
        if (rc != 0) {
            return -libc_h.errno(state);
        }
        long resident = 0;
        for (long i = 0; i < pages; i++) {
            resident += vec.get(ValueLayout.JAVA_BYTE, i) & 1;
        }
        return resident;
    }

    /**
     * Scratch bytes {@link #residentPages(MemorySegment, MemorySegment)} needs for ranges of up to
     * {@code maxBytes} (page alignment included when {@code maxBytes} includes a page of slack).
     *
     * @param maxBytes the largest range to check, plus one page
     * @return bytes: the errno capture state and one byte per page
     */
    public static long residentScratchBytes(long maxBytes) {
        return libc_h.CAPTURE_STATE_LAYOUT.byteSize() + (maxBytes + pageSizeBytes() - 1) / pageSizeBytes() + 1;
    }

    /**
     * Maps {@code bytes} of private anonymous memory, read-write, starting at a multiple of
     * {@code alignBytes}: {@code mmap(NULL, ..., PROT_READ | PROT_WRITE, MAP_PRIVATE |
     * MAP_ANONYMOUS, -1, 0)} of {@code alignBytes} more than asked, then {@code munmap} of the
     * unaligned head and the tail. Nothing is written: every page reads as zero and is committed
     * (given a zeroed physical page by the kernel) on its first touch, so advice such as
     * {@link #MADV_HUGEPAGE} given before that touch decides how the page is backed. Free it with
     * {@link #unmap}.
     *
     * @param bytes size in bytes, {@code > 0}; the mapping covers it rounded up to a page
     * @param alignBytes alignment of the start, a power of two; at least the page size is used
     * @return the start address, or {@code -errno} ({@code -ENOMEM} when the kernel refuses the
     *     address space, for instance under {@code vm.overcommit_memory=2})
     * @throws IllegalArgumentException if {@code bytes <= 0} or {@code alignBytes} is not a power
     *     of two
     */
    public static long mapAnonymous(long bytes, long alignBytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes: " + bytes + " (expected > 0)");
        }
        if (alignBytes <= 0 || Long.bitCount(alignBytes) != 1) {
            throw new IllegalArgumentException("alignBytes: " + alignBytes + " (expected a power of two)");
        }
        long page = pageSizeBytes();
        long align = Math.max(alignBytes, page);
        long length = alignUp(bytes, page);
        long slack = align - page; // mmap returns page-aligned addresses
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(libc_h.CAPTURE_STATE_LAYOUT);
            long start = libc_h.mmap(state, MemorySegment.NULL, length + slack,
                    libc_h.PROT_READ | libc_h.PROT_WRITE, libc_h.MAP_PRIVATE | libc_h.MAP_ANONYMOUS, -1, 0).address();
            if (start == libc_h.MAP_FAILED) {
                return -libc_h.errno(state);
            }
            long aligned = alignUp(start, align);
            if (aligned > start) {
                libc_h.munmap(state, MemorySegment.ofAddress(start), aligned - start);
            }
            long tail = start + length + slack - (aligned + length);
            if (tail > 0) {
                libc_h.munmap(state, MemorySegment.ofAddress(aligned + length), tail);
            }
            return aligned;
        }
    }

    /**
     * Unmaps memory from {@link #mapAnonymous}: {@code munmap} of {@code bytes} rounded up to a page.
     *
     * @param address the start {@link #mapAnonymous} returned
     * @param bytes the size it was given
     * @return 0, or the errno ({@link #EINVAL} for an unaligned address)
     */
    public static int unmap(long address, long bytes) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(libc_h.CAPTURE_STATE_LAYOUT);
            int rc = libc_h.munmap(state, MemorySegment.ofAddress(address), alignUp(bytes, pageSizeBytes()));
            return rc == 0 ? 0 : libc_h.errno(state);
        }
    }

    /**
     * Locks the pages of {@code segment} into RAM ({@code mlock}).
     *
     * @param segment a native segment
     * @return 0, or the errno: {@link #ENOMEM} when over {@code RLIMIT_MEMLOCK} (see {@link
     *     #memlockLimitBytes()}), {@link #EPERM}, {@link #EAGAIN}
     * @throws IllegalArgumentException if the segment is not native
     * @throws IllegalStateException if the segment's arena is closed
     */
    public static int mlock(MemorySegment segment) {
        requireNative(segment);
        checkAlive(segment);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(libc_h.CAPTURE_STATE_LAYOUT);
            int rc = libc_h.mlock(state, segment, segment.byteSize());
            return rc == 0 ? 0 : libc_h.errno(state);
        }
    }

    /**
     * Locks the pages of {@code segment} into RAM as they are first touched
     * ({@code mlock2(MLOCK_ONFAULT)}): pages resident now are locked at once, the others when a
     * fault brings them in, so locking commits nothing. The limit is checked against the whole
     * range now, as for {@link #mlock}.
     *
     * @param segment a native segment
     * @return 0, or the errno: {@link #ENOMEM} when over {@code RLIMIT_MEMLOCK}, {@link #EPERM},
     *     {@link #EINVAL} or {@link #ENOSYS} on a kernel older than 4.4
     * @throws IllegalArgumentException if the segment is not native
     * @throws IllegalStateException if the segment's arena is closed
     */
    public static int mlockOnFault(MemorySegment segment) {
        requireNative(segment);
        checkAlive(segment);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(libc_h.CAPTURE_STATE_LAYOUT);
            int rc = libc_h.mlock2(state, segment, segment.byteSize(), libc_h.MLOCK_ONFAULT);
            return rc == 0 ? 0 : libc_h.errno(state);
        }
    }

    /**
     * Unlocks the pages of {@code segment} ({@code munlock}).
     *
     * @param segment a native segment
     * @return 0, or the errno
     * @throws IllegalArgumentException if the segment is not native
     * @throws IllegalStateException if the segment's arena is closed
     */
    public static int munlock(MemorySegment segment) {
        requireNative(segment);
        checkAlive(segment);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(libc_h.CAPTURE_STATE_LAYOUT);
            int rc = libc_h.munlock(state, segment, segment.byteSize());
            return rc == 0 ? 0 : libc_h.errno(state);
        }
    }

    /**
     * The soft {@code RLIMIT_MEMLOCK} limit of this process: how many bytes an unprivileged
     * process may lock with {@code mlock} (a process with {@code CAP_IPC_LOCK} is not bound by it).
     *
     * @return the limit in bytes, {@link Long#MAX_VALUE} for {@code RLIM_INFINITY}
     * @throws IllegalStateException if getrlimit fails (it does not on Linux)
     */
    public static long memlockLimitBytes() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(libc_h.CAPTURE_STATE_LAYOUT);
            MemorySegment rlimit = arena.allocate(libc_h.RLIMIT_LAYOUT);
            if (libc_h.getrlimit(state, libc_h.RLIMIT_MEMLOCK, rlimit) != 0) {
                int errno = libc_h.errno(state);
                throw new IllegalStateException("getrlimit(RLIMIT_MEMLOCK) failed: " + errnoName(errno));
            }
            long soft = rlimit.get(libc_h.C_LONG, 0);
            return soft == libc_h.RLIM_INFINITY || soft < 0 ? Long.MAX_VALUE : soft;
        }
    }

    /**
     * Names an error number for messages, for example {@code "ENOSPC (No space left on device)"}.
     *
     * @param errno an error number
     * @return the symbolic name where known, and the C library's text
     */
    public static String errnoName(int errno) {
        String symbol = switch (errno) {
            case EPERM -> "EPERM";
            case ENOENT -> "ENOENT";
            case EINTR -> "EINTR";
            case EBADF -> "EBADF";
            case EAGAIN -> "EAGAIN";
            case ENOMEM -> "ENOMEM";
            case EACCES -> "EACCES";
            case EISDIR -> "EISDIR";
            case EINVAL -> "EINVAL";
            case EFBIG -> "EFBIG";
            case ENOSPC -> "ENOSPC";
            case ESPIPE -> "ESPIPE";
            case ENOSYS -> "ENOSYS";
            case EOPNOTSUPP -> "EOPNOTSUPP";
            default -> "errno " + errno;
        };
        MemorySegment text = libc_h.strerror(errno);
        return text.equals(MemorySegment.NULL) ? symbol : symbol + " (" + text.getString(0) + ")";
    }

    private static int openOrThrow(Arena arena, MemorySegment state, Path file, int flags) {
        int fd = libc_h.open(state, arena.allocateFrom(file.toString()), flags, 0);
        if (fd >= 0) {
            return fd;
        }
        int errno = libc_h.errno(state);
        String reason = "open(" + file + ") failed: " + errnoName(errno);
        IOException cause = switch (errno) {
            case ENOENT -> new NoSuchFileException(file.toString(), null, reason);
            case EACCES, EPERM -> new AccessDeniedException(file.toString(), null, reason);
            default -> new IOException(reason);
        };
        throw new UncheckedIOException(cause);
    }

    private static void requireNative(MemorySegment segment) {
        Objects.requireNonNull(segment, "segment");
        if (!segment.isNative()) {
            throw new IllegalArgumentException("segment: a heap segment (expected a native segment)");
        }
    }

    private static void checkAlive(MemorySegment segment) {
        if (!segment.scope().isAlive()) {
            throw new IllegalStateException("segment: its arena is already closed");
        }
    }

    private static long alignUp(long value, long alignment) {
        return (value + alignment - 1) & -alignment;
    }
}
